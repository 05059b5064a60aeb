"""Shared fixtures: the real sentence embedder and a tiny built-in policy, each built once.

Both are the real things (all-MiniLM-L6-v2 from its PyPI package; a Qwen2 model built and
warm-started by the project's own builder), only smaller where size is a choice: the tiny policy
uses the "tiny" model size and fewer demonstrations, so the whole suite stays fast on 2 cores.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("EMPO2_NO_PROGRESS", "1")

TINY_EPISODES = {"habit": 30, "stuck": 20, "wander": 10, "tip-success": 20, "tip-failure": 20}


@pytest.fixture(scope="session")
def embedder():
    """The real embedder; with EMPO2_TEST_EMBEDDING_CACHE set, its model's vectors are kept
    between sessions (embedding_cache.py)."""
    from embedding_cache import memory_embedder

    return memory_embedder()


@pytest.fixture(scope="session")
def tiny_policy() -> Path:
    """A tiny built-in policy folder (save_pretrained), built by the real builder.

    Kept in the product's own policy cache ($EMPO2_CACHE_DIR/policies, keyed by the recipe), the
    one the extension's test tiers use too (test/harness/tinyPolicy.mjs): a test run builds it
    once, and later runs find it. The build is deterministic from its recipe
    (test_builtin_policy.py), so a cached folder is the one this session would build.
    EMPO2_TEST_POLICY_CACHE names another folder for it (scripts/mutation.sh sets one).
    """
    from empo2.policy.builtin import BuiltinRecipe, build_builtin_policy, ensure_builtin_policy

    recipe = BuiltinRecipe(size="tiny", episodes=TINY_EPISODES, epochs=1, seed=0)
    cache = os.environ.get("EMPO2_TEST_POLICY_CACHE")
    if cache:
        path = Path(cache) / f"builtin-tiny-{recipe.key()}"
        if not (path / "empo2_build.json").exists():
            build_builtin_policy(recipe, path)  # written under a temporary name, then renamed
        return path
    return ensure_builtin_policy(recipe)


@pytest.fixture(scope="session")
def smollm2() -> Path:
    """SmolLM2-135M-Instruct converted from its PyPI wheel into the product's policy cache
    (converted once, ~30-50 s on 2 cores; later sessions find the folder)."""
    from empo2.policy.pretrained import ensure_packaged_policy

    return ensure_packaged_policy("smollm2-135m-instruct")


# Two EMPO² iterations of SmolLM2 on CPU: two one-step episodes of one variation, memory
# rollouts and off-policy updates every time (p = q = 1), LoRA r 8 (a checkpoint of adapters, not
# 1.6 GB of weights and Adam state).
SMOLLM2_RUN = {
    "iterations": 2,
    "checkpoint_every": 2,
    "env": {"tasks": ["power-device"], "train_variations": [0], "max_steps": 1},
    "policy": {"model": "smollm2-135m-instruct", "max_action_tokens": 4, "max_tip_tokens": 8, "lora_rank": 8},
    "algo": {"batch_tasks": 1, "group_size": 2, "p_memory": 1.0, "q_off_policy": 1.0, "minibatches": 1, "lr": 1e-4},
    "eval": {"every": 0},
}


def tiny_run_overrides(policy: Path, **extra) -> dict:
    """A config dict for a few fast iterations on the tiny policy."""
    config = {
        "iterations": 3,
        "env": {"tasks": ["power-device", "grow-plant"], "max_steps": 5},
        "policy": {"model": str(policy), "max_action_tokens": 6, "max_tip_tokens": 12},
        "algo": {"batch_tasks": 2, "group_size": 2, "p_memory": 1.0, "q_off_policy": 1.0, "minibatches": 2},
        "eval": {"every": 3, "max_variations": 1},
    }
    for key, value in extra.items():
        node = config
        *path, leaf = key.split(".")
        for part in path:
            node = node.setdefault(part, {})
        node[leaf] = value
    return config
