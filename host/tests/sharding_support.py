"""Run by torchrun from test_sharding.py: one EMPO² update with the policy sharded by FSDP2.

    torchrun --standalone --nproc_per_node 2 tests/sharding_support.py POLICY EPISODES OUT

Writes, from rank 0: the update's statistics, the full (gathered) gradients and parameters after
the step, and every rank's bytes of parameters, gradients and AdamW state read off its DTensor
shards, next to the totals of the unsharded model.
"""

from __future__ import annotations

import pickle
import sys

import torch

from distributed_support import ALGO
from empo2.config import AlgoConfig
from empo2.distributed import Dist
from empo2.policy.model import load_policy
from empo2.sharding import local_bytes, rank_memory, shard_model
from empo2.update import update_policy


def _full(tensor):
    return tensor.full_tensor() if hasattr(tensor, "full_tensor") else tensor


def sharded_update(policy: str, episodes, update_mode: str, dist: Dist) -> dict:
    torch.manual_seed(0)
    model, tokenizer = load_policy(policy)
    totals = {"parameters": local_bytes(model.parameters())}
    shard_model(model, torch.device("cpu"), mixed_bf16=False, cpu_offload=False)
    dist = Dist(rank=dist.rank, world=dist.world, local_rank=dist.local_rank, sharded=True)
    algo = AlgoConfig(**ALGO)
    # SGD for the comparison with one process (see distributed_support.py).
    optimizer = torch.optim.SGD([p for p in model.parameters() if p.requires_grad], lr=algo.lr)
    stats = update_policy(model, optimizer, episodes, update_mode, algo, tokenizer.pad_token_id,
                          torch.Generator().manual_seed(1), micro_batch=3, dist=dist)
    # full_tensor() is a collective: every rank gathers, rank 0 keeps the result.
    grads = {n: _full(p.grad).detach().clone() for n, p in model.named_parameters() if p.grad is not None}
    params = {n: _full(p).detach().clone() for n, p in model.named_parameters()}

    # Per-rank bytes with the optimizer the trainer uses (AdamW: two moments per weight).
    adam = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-4)
    adam.step()
    mine = rank_memory(model, adam)
    totals["gradients"] = totals["parameters"]
    totals["optimizer"] = 2 * totals["parameters"]
    return {"stats": stats, "grads": grads, "params": params, "rank_bytes": dist.gather(mine),
            "total_bytes": totals}


if __name__ == "__main__":
    policy, episodes_file, out = sys.argv[1:4]
    torch.set_num_threads(1)
    dist = Dist.from_env()
    with open(episodes_file, "rb") as f:
        episodes, update_mode = pickle.load(f)
    result = sharded_update(policy, episodes, update_mode, dist)
    if dist.main:
        torch.save(result, out)
    dist.barrier()
    dist.close()
