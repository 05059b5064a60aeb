"""Training checkpoints: everything a resumed run needs to continue exactly where it stopped.

A checkpoint folder holds the model (save_pretrained; omitted at iteration 0, where the model is
the configured one; with LoRA only the adapter, a few MB instead of 15 GB) and its tokenizer, so
the folder loads by itself (`empo2-host eval --run`), the optimizer state, the random generators
(the same on every rank; rollouts sample from per-episode generators seeded from the iteration,
so none of theirs needs saving), the intrinsic-reward archive and the memory store's marker
(the length of its log at that moment). It is filled under a temporary name and renamed into
place (atomic.py `commit_folder`: every file fsynced first), so it is complete or absent. Only
rank 0 writes it; every rank reads it on resume.
"""

from __future__ import annotations

import json

import torch

from ..atomic import atomic_write_json
from ..memory.layout import EVENTS_FILE
from ..memory.person_edits import first_person_edit
from ..run_folder.branch_files import log_bytes_branched
from ..run_folder.folder import RunFolder, iteration_name
from .sharding import load_sharded, save_sharded


def save_checkpoint(folder: RunFolder, trainer, keep: int) -> None:
    sharded = trainer.dist.sharded and trainer.iteration > 0
    if sharded:
        # Every rank writes its own shards into rank 0's temporary folder (one file system:
        # across nodes the run folder must be shared, as DCP requires), then rank 0 commits.
        tmp = trainer.dist.broadcast(folder.new_checkpoint_dir(trainer.iteration) if trainer.dist.main else None)
        save_sharded(tmp, trainer.model, trainer.optimizer)
        trainer.dist.barrier()
    if not trainer.dist.main:
        return
    if not sharded:
        tmp = folder.new_checkpoint_dir(trainer.iteration)
    if sharded:
        # The tokenizer, so `empo2-host export` writes a folder that loads by itself.
        trainer.tokenizer.save_pretrained(tmp / "tokenizer")
    elif trainer.iteration > 0:
        trainer.model.save_pretrained(tmp / "model")
        trainer.tokenizer.save_pretrained(tmp / "model")
        torch.save(trainer.optimizer.state_dict(), tmp / "optimizer.pt")
    torch.save(
        {
            "python_rng": trainer.rng.getstate(),
            "torch_generator": trainer.generator.get_state(),
            "torch_global": torch.get_rng_state(),
            "intrinsic": trainer.intrinsic.state_dict(),
        },
        tmp / "rng.pt",
    )
    state = {
        "iteration": trainer.iteration,
        "env_steps": trainer.env_steps,
        "memory_marker": trainer.memory.marker() if trainer.memory is not None else None,
        "has_model": trainer.iteration > 0,
        "format": "sharded" if sharded else "pretrained",
        "world": trainer.dist.world,
    }
    # trainer.json is written last: a folder without it is an incomplete checkpoint.
    atomic_write_json(tmp / "trainer.json", state)
    folder.commit_checkpoint(trainer.iteration, tmp, keep, pinned=checkpoint_before_edits(folder, state))


def checkpoint_before_edits(folder: RunFolder, newest: dict) -> int | None:
    """The newest checkpoint taken before the oldest of a person's edits that no rerun has seen
    (no branch of this run copied the memory log that far), so that "Rerun Off-Policy Update"
    can start from before them however many checkpoints came since; None when there is no such
    edit, or no checkpoint before it. `newest` is the trainer.json about to be committed."""
    start = log_bytes_branched(folder.path)
    edit = first_person_edit(folder.memory_path / EVENTS_FILE, start)
    if edit is None:
        return None
    before = None
    for iteration, marker in _markers(folder, newest):
        if marker is not None and marker <= edit:
            before = iteration if before is None else max(before, iteration)
    return before


def _markers(folder: RunFolder, newest: dict):
    """(iteration, memory log bytes) of every checkpoint, the one being committed included."""
    yield newest["iteration"], (newest.get("memory_marker") or {}).get("events_bytes")
    for iteration in folder.checkpoint_iterations():
        try:
            state = json.loads((folder.checkpoints_path / iteration_name(iteration) / "trainer.json").read_text())
        except (OSError, ValueError):
            continue
        yield iteration, (state.get("memory_marker") or {}).get("events_bytes")


def load_checkpoint(path, trainer) -> dict:
    state = json.loads((path / "trainer.json").read_text())
    if state["has_model"] and state.get("format") == "sharded":
        # DCP reshards: any world size, sharded or plain (a plain one-process resume too).
        load_sharded(path, trainer.model, trainer.optimizer)
    elif state["has_model"]:
        if trainer.dist.sharded:
            raise RuntimeError(
                f"checkpoint {path} holds whole weights (dist.strategy=ddp); resume it "
                "with dist.strategy=ddp, or start a new fsdp2 run from its model folder"
            )
        _load_weights(trainer.model, path / "model", str(trainer.device))
        trainer.optimizer.load_state_dict(
            torch.load(path / "optimizer.pt", weights_only=False, map_location=str(trainer.device))
        )
    rng = torch.load(path / "rng.pt", weights_only=False)
    trainer.rng.setstate(_as_tuple(rng["python_rng"]))
    # Older checkpoints say it only by their list of per-rank generators.
    written_by = state.get("world") or len(rng.get("torch_generators") or [None])
    if written_by != trainer.dist.world and state.get("format") != "sharded":
        raise RuntimeError(
            f"checkpoint {path} was written by {written_by} processes; "
            f"resume it with as many (this job has {trainer.dist.world})"
        )
    # The update's minibatch order: one stream, the same on every rank, so at any world size.
    trainer.generator.set_state(rng["torch_generator"])
    torch.set_rng_state(rng["torch_global"])
    trainer.intrinsic.load_state_dict(rng["intrinsic"])
    return state


def _load_weights(model, folder, device: str) -> None:
    from safetensors.torch import load_file

    weights = {}
    for shard in sorted(folder.glob("*.safetensors")):
        weights.update(load_file(shard, device=device))
    if hasattr(model, "peft_config"):
        from peft import set_peft_model_state_dict

        result = set_peft_model_state_dict(model, weights)
        if result.unexpected_keys:
            raise RuntimeError(f"checkpoint {folder} does not match the adapters ({result.unexpected_keys[:3]})")
        return
    missing, unexpected = model.load_state_dict(weights, strict=False)
    # Tied embeddings are saved once; everything else must be there.
    if unexpected or [k for k in missing if "lm_head" not in k]:
        raise RuntimeError(f"checkpoint {folder} does not match the model ({missing[:3]} {unexpected[:3]})")


def _as_tuple(state):
    return tuple(_as_tuple(s) for s in state) if isinstance(state, list) else state


__all__ = ["save_checkpoint", "load_checkpoint"]
