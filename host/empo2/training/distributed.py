"""Data-parallel training over torch.distributed (torchrun), and the one-process identity.

    torchrun --nproc_per_node 8 -m empo2.cli train --preset scienceworld-power-component

Every rank holds the whole model and the same memory. An iteration's B GRPO groups are dealt out
to the ranks (group g to rank g mod world); each rank rolls out and writes the tips of its own
episodes, then all episodes are gathered so that every rank sees the same batch in the same order:
novelty rewards, memory writes and the update's minibatches are then the same computation on
every rank. The update splits each minibatch's samples across ranks, weights each rank's loss by
its share of the minibatch's tokens and sums the gradients (all-reduce), so the step is the
one-process step up to float summation order (tests/test_distributed.py). Rank 0 alone writes the
run folder and serves the protocol; the others keep an in-memory replica of the memory store.

Why not DistributedDataParallel: its gradient average assumes equal per-rank batches, while
token-mean losses over ragged action lengths need token-weighted shares; one explicit all-reduce
per optimizer step is simpler than correcting DDP's average, and it leaves gradient checkpointing
and LoRA untouched.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import torch
import torch.distributed as torch_dist

from ..algo.losses import merge_stats
from ..torchrun import world_size


@dataclass
class Dist:
    """This process's place in the job; `Dist()` is the single-process default."""

    rank: int = 0
    world: int = 1
    local_rank: int = 0
    sharded: bool = False
    """The policy is split by FSDP2 (sharding.py): FSDP reduces the gradients, ragged forward
    passes run inside `gathered`, and the update's micro-batches run in lockstep."""

    @property
    def main(self) -> bool:
        return self.rank == 0

    @property
    def active(self) -> bool:
        return self.world > 1

    @classmethod
    def from_env(cls) -> Dist:
        """Joins the job torchrun described in the environment (WORLD_SIZE > 1), else one process."""
        world = world_size()
        if world <= 1:
            return cls()
        if not torch_dist.is_initialized():
            backend = "nccl" if torch.cuda.is_available() else "gloo"
            torch_dist.init_process_group(backend=backend)
        local = int(os.environ.get("LOCAL_RANK", "0"))
        if torch.cuda.is_available():
            torch.cuda.set_device(local)
        return cls(rank=torch_dist.get_rank(), world=torch_dist.get_world_size(), local_rank=local)

    # -- collectives (identities in one process) --------------------------------------------

    def barrier(self) -> None:
        if self.active:
            torch_dist.barrier()

    def broadcast(self, obj: Any) -> Any:
        """Rank 0's value of a picklable object, on every rank."""
        if not self.active:
            return obj
        box = [obj]
        torch_dist.broadcast_object_list(box, src=0)
        return box[0]

    def gather(self, obj: Any) -> list[Any]:
        """Every rank's object, in rank order, on every rank."""
        if not self.active:
            return [obj]
        out: list[Any] = [None] * self.world
        torch_dist.all_gather_object(out, obj)
        return out

    def sum_gradients(self, parameters: Sequence[torch.nn.Parameter]) -> None:
        """Sums .grad over ranks in one flat all-reduce (parameters without a grad count as 0);
        under FSDP2 the backward pass has already reduce-scattered them."""
        if not self.active or self.sharded:
            return
        params = [p for p in parameters if p.requires_grad]
        grads = [p.grad if p.grad is not None else torch.zeros_like(p) for p in params]
        flat = torch.cat([g.reshape(-1).float() for g in grads])
        torch_dist.all_reduce(flat, op=torch_dist.ReduceOp.SUM)
        offset = 0
        for p, g in zip(params, grads):
            n = g.numel()
            p.grad = flat[offset : offset + n].view_as(g).to(g.dtype)
            offset += n

    def reduce_stats(self, stats: dict[str, float]) -> dict[str, float]:
        """Sums additive statistics over ranks; ratio_max/ratio_min take the max/min."""
        if not self.active:
            return stats
        merged: dict[str, float] = {}
        for part in self.gather(stats):
            merge_stats(merged, part)
        return merged

    def gathered(self, model):
        """A context in which ranks may run different numbers of forward passes: full weights on
        every rank under FSDP2 (sharding.gathered), nothing to do otherwise."""
        if not self.sharded:
            return contextlib.nullcontext()
        from .sharding import gathered

        return gathered(model)

    # -- sharding ---------------------------------------------------------------------------

    def owns_group(self, group: int) -> bool:
        return group % self.world == self.rank

    def mine(self, items: Sequence[Any]) -> list[int]:
        """Indices of the items this rank handles when items are dealt out round-robin."""
        return list(range(self.rank, len(items), self.world))

    def gather_episodes(self, episodes: list, after: list[list[str]], order: list[int]):
        """All ranks' episodes (and observations) back in global order; `order` holds the global
        index of each local episode."""
        if not self.active:
            return episodes, after
        parts = self.gather(list(zip(order, episodes, after)))
        rows = sorted((row for part in parts for row in part), key=lambda row: row[0])
        return [ep for _, ep, _ in rows], [obs for _, _, obs in rows]

    def close(self) -> None:
        # Also the one-process group that FSDP2 needs (sharding.ensure_process_group).
        if torch_dist.is_initialized():
            torch_dist.destroy_process_group()


SINGLE = Dist()
