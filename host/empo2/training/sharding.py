"""Fully sharded data parallel (PyTorch FSDP2) for the policy, and its sharded checkpoints.

    torchrun --nproc_per_node 8 -m empo2.cli train --preset scienceworld-power-component dist.strategy=fsdp2

With `dist.strategy=ddp` (distributed.py) every rank holds the whole model, its gradients and the
Adam state: about 16 bytes per parameter with fp32 master weights, 120 GB per rank for a 7B model.
With `fsdp2` each decoder layer, and the root (embeddings, final norm, head), is a
`torch.distributed.fsdp.fully_shard` unit whose parameters, gradients and optimizer state are
split in 1/world row shards (DTensors); a unit's full weights exist only while it runs.

How the EMPO² iteration maps onto it (the choices, in order):
1. Rollouts stay per rank (each rank plays its own groups, as with ddp), but episodes end at
   different steps, so the ranks run different numbers of forward passes. FSDP all-gathers inside
   every forward, so ragged forwards would deadlock: `gathered()` unshards every unit once
   (one all-gather per unit, every rank together), generation then runs with no collectives, and
   the units are resharded when it ends, so no full copy is left behind. The cost is one full
   bf16/fp32 copy of the weights on each rank for the length of a rollout (15 GB for 7B in bf16),
   the alternative verl takes too (it hands full weights to its inference engine).
2. No-grad scoring (π_old, the KL reference) is ragged in the same way and runs gathered too.
3. The update's forward/backward passes run sharded, in lockstep: every rank runs the same number
   of micro-batches (a rank with fewer rows repeats a row with weight 0), so the all-gathers and
   reduce-scatters of all ranks pair up.
4. Gradients are summed, not averaged (`set_gradient_divide_factor(1)`): each rank's loss is
   already weighted by its share of the minibatch's tokens (update.py), exactly as with ddp.
5. Mixed precision: with `policy.dtype=mixed-bfloat16` the units gather and compute in bf16 and
   reduce gradients in fp32 onto fp32 master shards (`MixedPrecisionPolicy`), the FSDP form of
   today's autocast; `dist.cpu_offload` keeps parameter and optimizer shards in host memory.
6. LoRA: adapters are sharded with the layer they sit in, like every other parameter of the
   unit. Replicating them would need a second, hand-written gradient all-reduce for a few MB of
   weights; sharding them costs nothing extra and keeps one code path.
7. Checkpoints: `torch.distributed.checkpoint` (DCP) writes each rank's shards into the
   checkpoint folder; DCP reshards on load, so a run saved by 2 processes resumes with 1 (even
   without a process group) or with 4, and plays the episodes the uninterrupted run plays: no
   sampling stream belongs to a rank (trainer.py, choice 6). `empo2-host export` turns one into a
   save_pretrained folder.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path

import torch
import torch.distributed as torch_dist

SHARDED_DIR = "sharded"
"""Sub-folder of a checkpoint that holds the DCP shards (model and optimizer)."""


# -- wrapping -------------------------------------------------------------------------------------


def decoder_layers(model: torch.nn.Module) -> list[torch.nn.Module]:
    """The model's repeated blocks: transformers names them in `_no_split_modules` (Qwen2,
    Llama, ...); under peft the same classes sit inside the wrapper."""
    names: set[str] = set()
    for module in model.modules():
        names.update(getattr(module, "_no_split_modules", None) or ())
    layers = [m for m in model.modules() if type(m).__name__ in names]
    if not layers:
        raise ValueError(f"{type(model).__name__} declares no decoder layer class to shard")
    return layers


def ensure_process_group() -> None:
    """FSDP needs a process group even for one process (`gpu_check.py`, a 1-process resume)."""
    if torch_dist.is_initialized():
        return
    backend = "nccl" if torch.cuda.is_available() else "gloo"
    if "MASTER_ADDR" in os.environ:  # torchrun --nproc_per_node 1
        torch_dist.init_process_group(backend=backend)
    else:
        store = torch_dist.HashStore()
        torch_dist.init_process_group(backend=backend, store=store, rank=0, world_size=1)


def shard_model(model: torch.nn.Module, device: torch.device, mixed_bf16: bool, cpu_offload: bool) -> torch.nn.Module:
    """Applies fully_shard per decoder layer and on the root, in place; returns the model."""
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.fsdp import CPUOffloadPolicy, MixedPrecisionPolicy, fully_shard

    ensure_process_group()
    mesh = init_device_mesh(device.type, (torch_dist.get_world_size(),))
    options = {"mesh": mesh}
    if mixed_bf16:
        options["mp_policy"] = MixedPrecisionPolicy(param_dtype=torch.bfloat16, reduce_dtype=torch.float32)
    if cpu_offload:
        # Pinned pages only speed up copies to a GPU, and pinning needs a CUDA driver.
        options["offload_policy"] = CPUOffloadPolicy(pin_memory=torch.cuda.is_available())
    for layer in decoder_layers(model):
        fully_shard(layer, **options)
    fully_shard(model, **options)
    for unit in units(model):
        # Sum, not mean (choice 4); gloo has no pre-multiplied sum, so scale around a plain SUM.
        unit.set_gradient_divide_factor(1.0)
        unit.set_force_sum_reduction_for_comms(True)
    if mixed_bf16:
        model.empo2_compute_dtype = None  # FSDP casts; no autocast on top
    model.empo2_sharded = True
    return model


def is_sharded(model) -> bool:
    return bool(getattr(_module_of(model), "empo2_sharded", False))


def units(model) -> list:
    from torch.distributed.fsdp import FSDPModule

    module = _module_of(model)
    return [m for m in module.modules() if isinstance(m, FSDPModule)] if module is not None else []


def _module_of(model):
    """The nn.Module behind a model or a view of one (AdapterFreeView holds `.model`)."""
    if isinstance(model, torch.nn.Module):
        return model
    return getattr(model, "model", None)


@contextlib.contextmanager
def gathered(model) -> Iterator[None]:
    """Full weights on every rank for ragged, collective-free forward passes (choice 1).

    Every rank must enter and leave together. A no-op for an unsharded model."""
    parts = units(model) if is_sharded(model) else []
    if not parts:
        yield
        return
    root = parts[0] if parts[0] is _module_of(model) else None
    for unit in parts:
        unit.set_reshard_after_forward(False, recurse=False)
        unit.unshard()
    try:
        yield
    finally:
        for unit in parts:
            unit.reshard()
            # The root keeps its gathered weights between forward and backward by default.
            unit.set_reshard_after_forward(unit is not root, recurse=False)


# -- measuring ------------------------------------------------------------------------------------


def local_bytes(tensors) -> int:
    """Bytes this rank holds of the given tensors (a DTensor's local shard, a tensor whole)."""
    total = 0
    for t in tensors:
        if t is None:
            continue
        local = t.to_local() if hasattr(t, "to_local") else t
        total += local.numel() * local.element_size()
    return total


def rank_memory(model, optimizer) -> dict[str, int]:
    """Per-rank bytes of parameters, gradients and optimizer state, read off the tensors."""
    params = [p for p in model.parameters()]
    state = [v for s in optimizer.state.values() for v in s.values() if torch.is_tensor(v) and v.dim() > 0]
    return {
        "parameters": local_bytes(params),
        "gradients": local_bytes(p.grad for p in params),
        "optimizer": local_bytes(state),
    }


# -- checkpoints ----------------------------------------------------------------------------------


def _state_options(full: bool = False, loading: bool = False):
    from torch.distributed.checkpoint.state_dict import StateDictOptions

    # Frozen weights (a LoRA base) are the configured model: only what trains is saved. Loading
    # such a state is not strict (the frozen weights are absent by design); _check_loaded says
    # whether everything that trains was found.
    return StateDictOptions(ignore_frozen_params=True, full_state_dict=full, cpu_offload=full, strict=not loading)


def _check_loaded(model, result, folder: Path) -> None:
    """The keys a non-strict load left out may only be frozen weights; none may be unknown."""
    trainable = {name for name, p in model.named_parameters() if p.requires_grad}
    missing = [k for k in result.missing_keys if k in trainable]
    if missing or result.unexpected_keys:
        raise RuntimeError(
            f"checkpoint {folder} does not match the model: missing {missing[:3]}, "
            f"unexpected {list(result.unexpected_keys)[:3]}"
        )


def save_sharded(folder: Path, model, optimizer) -> None:
    """Every rank writes its shards of the model and the optimizer under folder/sharded."""
    import torch.distributed.checkpoint as dcp
    from torch.distributed.checkpoint.state_dict import get_state_dict

    model_state, optim_state = get_state_dict(model, optimizer, options=_state_options())
    dcp.save({"model": model_state, "optimizer": optim_state}, checkpoint_id=str(folder / SHARDED_DIR))


def load_sharded(folder: Path, model, optimizer=None) -> None:
    """Loads folder/sharded into a sharded or plain model (DCP reshards to this job's world)."""
    import torch.distributed.checkpoint as dcp
    from torch.distributed.checkpoint.state_dict import get_state_dict, set_state_dict

    if optimizer is None:
        from torch.distributed.checkpoint.state_dict import get_model_state_dict, set_model_state_dict

        state = {"model": get_model_state_dict(model, options=_state_options())}
        dcp.load(state, checkpoint_id=str(folder / SHARDED_DIR))
        _check_loaded(model, set_model_state_dict(model, state["model"], options=_state_options(loading=True)), folder)
        return
    model_state, optim_state = get_state_dict(model, optimizer, options=_state_options())
    state = {"model": model_state, "optimizer": optim_state}
    dcp.load(state, checkpoint_id=str(folder / SHARDED_DIR))
    _check_loaded(
        model,
        set_state_dict(
            model,
            optimizer,
            model_state_dict=state["model"],
            optim_state_dict=state["optimizer"],
            options=_state_options(loading=True),
        ),
        folder,
    )


def has_sharded(folder: Path) -> bool:
    return (folder / SHARDED_DIR / ".metadata").is_file()
