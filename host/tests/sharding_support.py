"""Run by torchrun from test_sharding.py: one EMPO² update with the policy sharded by FSDP2.

    torchrun --standalone --nproc_per_node 2 tests/sharding_support.py POLICY EPISODES OUT [VARIANT...]

For each variant of distributed_support.VARIANTS (default: plain) writes, from rank 0: the
update's statistics and the full (gathered) gradients and parameters after the step; every rank's
bytes of the trainable parameters read off its DTensor shards; the bytes of full weights FSDP
holds inside `gathered` (a sampled generation) and after it, for the policy and the KL reference.
The plain variant adds every rank's bytes of parameters, gradients and AdamW state next to the
totals of the unsharded model.
"""

from __future__ import annotations

import pickle
import sys

import torch

from distributed_support import ALGO, VARIANTS, build
from empo2.config import AlgoConfig
from empo2.policy.generation import generate_from_ids
from empo2.policy.model import load_policy
from empo2.torchrun import leave_rank
from empo2.training.distributed import Dist
from empo2.training.sharding import gathered, local_bytes, rank_memory, shard_model, units
from empo2.training.update import update_policy


def _full(tensor):
    return tensor.full_tensor() if hasattr(tensor, "full_tensor") else tensor


def unsharded_bytes(model) -> int:
    """Bytes of full (all-gathered) parameter storage FSDP holds now. Read off its private
    per-parameter state (torch 2.15: FSDPParam.all_gather_outputs and _unsharded_inner_tensors,
    freed by resizing their storage to 0): there is no public API for it."""
    total = 0
    for unit in units(model):
        for group in unit._get_fsdp_state()._fsdp_param_groups:
            for param in group.fsdp_params:
                for t in (*param.all_gather_outputs, *getattr(param, "_unsharded_inner_tensors", ())):
                    total += t.untyped_storage().size()
    return total


def sharded_update(policy: str, episodes, update_mode: str, dist: Dist, variant: str = "plain") -> dict:
    torch.manual_seed(0)
    options = VARIANTS[variant]

    def shard(model):
        return shard_model(model, torch.device("cpu"), mixed_bf16=False, cpu_offload=options.get("cpu_offload", False))

    model, tokenizer, reference = build(policy, options, shard)
    dist = Dist(rank=dist.rank, world=dist.world, local_rank=dist.local_rank, sharded=True)
    algo = AlgoConfig(**ALGO, kl_beta=options.get("kl_beta", 0.0))
    # SGD for the comparison with one process (see distributed_support.py).
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
    # full_tensor() is a collective: every rank gathers, rank 0 keeps the result.
    grads = {n: _full(p.grad).detach().clone() for n, p in model.named_parameters() if p.grad is not None}
    params = {n: _full(p).detach().clone() for n, p in model.named_parameters()}
    trainable = [p for p in model.parameters() if p.requires_grad]
    result = {
        "stats": stats,
        "grads": grads,
        "params": params,
        "trainable_bytes": dist.gather(local_bytes(trainable)),
        "trainable_total": sum(p.numel() * p.element_size() for p in trainable),
        "offloaded": all(
            p.offload_to_cpu
            for unit in units(model)
            for group in unit._get_fsdp_state()._fsdp_param_groups
            for p in group.fsdp_params
        ),
    }

    # What FSDP holds of full weights after the update (which scored π_old and the reference
    # inside `gathered`), and inside `gathered` during a ragged, collective-free generation
    # (rank r samples r + 1 prompts). Under LoRA the reference is the policy's own base.
    prompts = [s.prompt_ids for ep in episodes for s in ep.steps][: dist.rank + 1]
    models = {"policy": model}
    if isinstance(reference, torch.nn.Module):
        models["reference"] = reference
    after_update = {name: unsharded_bytes(m) for name, m in models.items()}
    inside, after = {}, {}
    for name, m in models.items():
        with gathered(m):
            generate_from_ids(
                m, tokenizer, prompts, 4, 1.0, [torch.Generator().manual_seed(i) for i in range(len(prompts))]
            )
            inside[name] = unsharded_bytes(m)
        after[name] = unsharded_bytes(m)
    result["unsharded_after_update"] = dist.gather(after_update)
    result["unsharded_inside"], result["unsharded_after"] = dist.gather(inside), dist.gather(after)
    result["full_bytes"] = {
        name: sum(p.numel() * p.element_size() for p in m.parameters()) for name, m in models.items()
    }
    result["rank_model_bytes"] = dist.gather({name: local_bytes(m.parameters()) for name, m in models.items()})
    result["checkpointing"] = bool(getattr(model, "is_gradient_checkpointing", False))

    if variant == "plain":  # per-rank bytes with the optimizer the trainer uses (AdamW)
        totals = {"parameters": local_bytes(load_policy(policy)[0].parameters())}
        adam = torch.optim.AdamW(trainable, lr=1e-4)
        adam.step()
        result["rank_bytes"] = dist.gather(rank_memory(model, adam))
        totals["gradients"] = totals["parameters"]
        totals["optimizer"] = 2 * totals["parameters"]
        result["total_bytes"] = totals
    return result


if __name__ == "__main__":
    policy, episodes_file, out, *variants = sys.argv[1:]
    torch.set_num_threads(1)
    dist = Dist.from_env()
    with open(episodes_file, "rb") as f:
        episodes, update_mode = pickle.load(f)
    results = {v: sharded_update(policy, episodes, update_mode, dist, v) for v in variants or ["plain"]}
    if dist.main:
        torch.save(results if variants else results["plain"], out)
    dist.barrier()
    dist.close()
    leave_rank(0)  # past the interpreter's teardown of torch.distributed (empo2/torchrun.py)
