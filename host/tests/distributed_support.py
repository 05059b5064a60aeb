"""Run by torchrun from test_distributed.py: one EMPO² update of pickled episodes on each rank.

    torchrun --standalone --nproc_per_node 2 tests/distributed_support.py POLICY EPISODES OUT

`one_update` is also the one-process baseline of test_sharding.py, for each of its VARIANTS.
"""

from __future__ import annotations

import pickle
import sys

import torch

from empo2.config import AlgoConfig
from empo2.policy.model import LoraSettings, load_policy
from empo2.torchrun import leave_rank
from empo2.training.distributed import SINGLE, Dist
from empo2.training.trainer import kl_reference
from empo2.training.update import update_policy

ALGO = dict(minibatches=2, lr=1e-3, low_prob_mask="token")
VARIANTS = {
    "plain": {},
    # Adapters on every projection, and the KL reference that is the base beneath them.
    "lora": {"lora_rank": 4, "kl_beta": 0.1},
    # A full fine-tune's KL reference: a second, frozen model (sharded like the policy).
    "kl": {"kl_beta": 0.1},
    "cpu_offload": {"cpu_offload": True},
    "gradient_checkpointing": {"gradient_checkpointing": True},
}
"""What test_sharding.py runs under FSDP2 and compares with one process."""


def build(policy: str, variant: dict, shard=None):
    """(model, tokenizer, reference or None) for a variant; `shard` wraps a model in FSDP2."""
    lora = LoraSettings(variant["lora_rank"]) if variant.get("lora_rank") else None
    model, tokenizer = load_policy(
        policy, gradient_checkpointing=variant.get("gradient_checkpointing", False), lora=lora
    )
    if shard is not None:
        shard(model)
    reference = kl_reference(model, policy, "cpu", "auto", shard) if variant.get("kl_beta") else None
    return model, tokenizer, reference


def one_update(policy: str, episodes, update_mode: str, dist: Dist = SINGLE, variant: str = "plain") -> dict:
    """Loss statistics, last-minibatch gradients and parameters after one update."""
    torch.manual_seed(0)
    options = VARIANTS[variant]
    model, tokenizer, reference = build(policy, options)
    algo = AlgoConfig(**ALGO, kl_beta=options.get("kl_beta", 0.0))
    # SGD, not AdamW: Adam divides by sqrt(v), so a gradient of 1e-10 that differs in its last
    # bits (summation order) moves a weight by a full lr either way; SGD keeps the comparison
    # of parameters as tight as that of gradients.
    optimizer = torch.optim.SGD([p for p in model.parameters() if p.requires_grad], lr=algo.lr)
    stats = update_policy(
        model,
        optimizer,
        episodes,
        update_mode,
        algo,
        tokenizer.pad_token_id,
        torch.Generator().manual_seed(1),
        reference,
        micro_batch=3,
        dist=dist,
    )
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
    leave_rank(0)  # past the interpreter's teardown of torch.distributed (empo2/torchrun.py)
