"""The names of the rollout and update modes (docs/paper.md §2 and the paper's Table 3), written once.

Torch-free, on the ground floor: the server, the debugger and the benchmarks name modes without
loading the trainer. training/rollout.py and training/update.py re-export them.
"""

from __future__ import annotations

# How an episode was played: tips retrieved into every turn, or none.
MEMORY, MEMORY_FREE = "memory", "memory-free"
ROLLOUT_MODES = (MEMORY, MEMORY_FREE)

# How an iteration's episodes update θ (Table 3's three ratio rows).
ON_POLICY, ON_POLICY_WITH_TIPS, OFF_POLICY = "on-policy", "on-policy-with-tips", "off-policy"
UPDATE_MODES = (ON_POLICY, ON_POLICY_WITH_TIPS, OFF_POLICY)
