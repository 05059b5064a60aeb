"""`empo2-host export`: a checkpoint as a plain save_pretrained folder.

    empo2-host export .empo2/runs/<run-id> --out exported/         # the latest checkpoint
    empo2-host export .empo2/runs/<run-id>/checkpoints/iter-000040 --out exported/

A sharded checkpoint (dist.strategy=fsdp2) holds each rank's DCP shards, not weights that
transformers can load; export rebuilds the configured model on the CPU in one process, loads the
shards into it (DCP reshards to one process, no process group needed) and writes it with its
tokenizer, for evaluation, the debugger and ONNX export. With LoRA the folder is the adapter on
top of its base, as a LoRA run's own checkpoints are. A whole-weights checkpoint is copied.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path

from ..config import load_config
from ..run_folder.folder import RunFolder, RunFolderError


class ExportError(ValueError):
    """A checkpoint that cannot be exported; the message is one sentence."""


def checkpoint_of(path: Path) -> tuple[Path, Path]:
    """(run folder, checkpoint folder) for a run folder (its latest checkpoint) or a checkpoint."""
    if (path / "trainer.json").is_file():
        return path.parent.parent, path
    try:
        folder = RunFolder.open(path)
    except RunFolderError:
        raise ExportError(f"{path} is neither a run folder nor a checkpoint folder") from None
    latest = folder.latest_checkpoint()
    if latest is None:
        raise ExportError(f"run {path} has no checkpoint yet")
    return path, latest[1]


def is_sharded_checkpoint(checkpoint: Path) -> bool:
    state = json.loads((checkpoint / "trainer.json").read_text())
    return state.get("format") == "sharded"


def export_checkpoint(path: Path, out: Path) -> Path:
    """Writes the checkpoint's policy to `out` (save_pretrained with its tokenizer); returns out."""
    run, checkpoint = checkpoint_of(path)  # a wrong path fails before torch loads

    from ..policy.model import LoraSettings, load_policy, load_tokenizer
    from ..training.sharding import load_sharded
    from ..training.trainer import resolve_model

    state = json.loads((checkpoint / "trainer.json").read_text())
    if not state.get("has_model"):
        raise ExportError(
            f"checkpoint {checkpoint.name} is the configured model itself (iteration 0); nothing was trained yet"
        )
    if out.exists() and any(out.iterdir()):
        raise ExportError(f"{out} exists and is not empty; choose another --out")
    if state.get("format") != "sharded":
        shutil.copytree(checkpoint / "model", out, dirs_exist_ok=True)
        return out
    config = load_config(RunFolder.open(run).config())
    p = config.policy
    lora = LoraSettings(p.lora_rank, p.lora_alpha, p.lora_dropout, tuple(p.lora_targets)) if p.lora_rank else None
    # float32: the master weights the shards hold under mixed-bfloat16.
    dtype = "float32" if p.dtype == "mixed-bfloat16" else p.dtype
    model, _ = load_policy(
        resolve_model(p.model), device="cpu", dtype="float32" if dtype == "auto" else dtype, lora=lora
    )
    load_sharded(checkpoint, model)
    out.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(out)
    load_tokenizer(str(checkpoint / "tokenizer")).save_pretrained(out)
    return out


def plain_model_folder(checkpoint: Path) -> tuple[str, tempfile.TemporaryDirectory | None]:
    """A folder that load_policy reads for this checkpoint: its model/ folder, or a temporary
    export of a sharded one (the caller keeps the returned TemporaryDirectory alive)."""
    if not is_sharded_checkpoint(checkpoint):
        return str(checkpoint / "model"), None
    scratch = tempfile.TemporaryDirectory(prefix="empo2-export-")
    return str(export_checkpoint(checkpoint, Path(scratch.name) / "model")), scratch
