"""Run by torchrun from test_distributed.py: one EMPO² update of pickled episodes on each rank.

    torchrun --standalone --nproc_per_node 2 tests/distributed_support.py POLICY EPISODES OUT
"""

from __future__ import annotations

import pickle
import sys

import torch

from empo2.config import AlgoConfig
from empo2.distributed import SINGLE, Dist
from empo2.policy.model import load_policy
from empo2.update import update_policy

ALGO = dict(minibatches=2, lr=1e-3, low_prob_mask="token")


def one_update(policy: str, episodes, update_mode: str, dist: Dist = SINGLE) -> dict:
    """Loss statistics, last-minibatch gradients and parameters after one update."""
    torch.manual_seed(0)
    model, tokenizer = load_policy(policy)
    algo = AlgoConfig(**ALGO)
    # SGD, not AdamW: Adam divides by sqrt(v), so a gradient of 1e-10 that differs in its last
    # bits (summation order) moves a weight by a full lr either way; SGD keeps the comparison
    # of parameters as tight as that of gradients.
    optimizer = torch.optim.SGD([p for p in model.parameters() if p.requires_grad], lr=algo.lr)
    stats = update_policy(model, optimizer, episodes, update_mode, algo, tokenizer.pad_token_id,
                          torch.Generator().manual_seed(1), micro_batch=3, dist=dist)
    return {
        "stats": stats,
        "grads": {n: p.grad.detach().clone() for n, p in model.named_parameters() if p.grad is not None},
        "params": {n: p.detach().clone() for n, p in model.named_parameters()},
    }


if __name__ == "__main__":
    policy, episodes_file, out = sys.argv[1:4]
    torch.set_num_threads(1)
    dist = Dist.from_env()
    with open(episodes_file, "rb") as f:
        episodes, update_mode = pickle.load(f)
    result = one_update(policy, episodes, update_mode, dist)
    if dist.main:
        torch.save(result, out)
    dist.close()
