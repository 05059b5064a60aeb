"""`empo2-host export-onnx`: a policy as ONNX, for scoring recorded episodes without a host.

    empo2-host export-onnx .empo2/runs/<run-id>                     # its latest checkpoint
    empo2-host export-onnx .empo2/runs/<run-id>/checkpoints/iter-000040
    empo2-host export-onnx path/to/hf-causal-lm --out model-onnx/
    empo2-host export-onnx builtin

Where it goes (`--out` overrides): a run's checkpoint goes into the run folder, as
`onnx/iter-NNNNNN/` (so a run folder copied off a GPU box carries it, and the extension finds
the export of the checkpoint that played an episode by its iteration); a model folder goes next
to it as `<folder>-onnx/`, and the built-in policy next to its place in the policy cache (even when
its weights come from the package's shipped copy, which is never written). The folder is filled under a temporary name
and renamed into place (atomic.py), so it is complete or absent.

What it holds, read by the extension's scorer (src/scoring/onnxPolicy.ts):
    model.onnx          inputs input_ids (B, S) int64 and attention_mask (B, S) int64, 1 on real
                        tokens (left padding allowed); output logits (B, S, V) float32. Batch and
                        sequence are dynamic; no KV cache. Position ids are computed inside the
                        graph from the mask, exactly as `generation.pad_layout` computes them, so
                        the same padded rows give the same logits as the host's scoring pass.
    tokens.json         the text of every token id (the host tokenizer's decode of each id alone)
    tokenizer files     the policy's own, as save_pretrained writes them
    onnx_export.json    written last: MANIFEST_FIELDS below

The graph is fp32 whatever the checkpoint's dtype (the CPU runtime's type); a LoRA checkpoint is
exported with its adapters merged into the weights. Exporter: torch.onnx's dynamo exporter (it
needs the `onnx` and `onnxscript` packages; the TorchScript one is deprecated and traces the
attention mask's shape checks as constants).
"""

from __future__ import annotations

import json
import shutil
import tempfile
import warnings
from pathlib import Path

from ..atomic import atomic_write_json, commit_folder
from ..policy.pretrained import PACKAGED_MODELS, is_packaged_model, packaged_policy_path
from ..run_folder.folder import RunFolder
from .plain import ExportError, checkpoint_of, plain_model_folder

ONNX_FOLDER = "onnx"
MODEL_FILE = "model.onnx"
TOKENS_FILE = "tokens.json"
MANIFEST_FILE = "onnx_export.json"
INPUT_NAMES = ("input_ids", "attention_mask")
OUTPUT_NAME = "logits"
FORMAT_VERSION = 1
# ONNX protobufs stop at 2 GB; a larger model keeps its weights in model.onnx.data beside it.
_INLINE_WEIGHTS_LIMIT = 1_500_000_000


def default_out(source: str) -> Path:
    """Where `export-onnx SOURCE` writes without --out (the module docstring's rule)."""
    if source == "builtin":  # beside the policy in the cache, never inside the package's shipped copy
        from ..policy.builtin import BuiltinRecipe, builtin_policy_path

        path = builtin_policy_path(BuiltinRecipe())
        return path.with_name(path.name + "-onnx")
    if is_packaged_model(source):  # beside its conversion in the cache
        path = packaged_policy_path(PACKAGED_MODELS[source])
        return path.with_name(path.name + "-onnx")
    path = Path(source)
    if _is_run_or_checkpoint(path):
        run, checkpoint = checkpoint_of(path)
        return run / ONNX_FOLDER / checkpoint.name
    return path.parent / f"{path.name}-onnx"


def _is_run_or_checkpoint(path: Path) -> bool:
    return (path / "trainer.json").is_file() or (path / "run.json").is_file()


def _model_folder(source: str) -> tuple[str, dict, tempfile.TemporaryDirectory | None]:
    """(a folder load_policy reads, what the manifest says of the source, scratch to keep alive)."""
    from ..config import load_config
    from ..training.trainer import resolve_model

    if source == "builtin" or is_packaged_model(source):
        return resolve_model(source), {"source": source, "run": None, "iteration": None, "temperature": None}, None
    path = Path(source)
    if not path.exists():
        raise ExportError(f"there is no run, checkpoint or model folder at {path}")
    if not _is_run_or_checkpoint(path):
        if not (path / "config.json").is_file():
            raise ExportError(f"{path} is not a run, a checkpoint or a model folder (no config.json)")
        return str(path), {"source": str(path), "run": None, "iteration": None, "temperature": None}, None
    run, checkpoint = checkpoint_of(path)
    folder = RunFolder.open(run)
    config = load_config(folder.config())
    state = json.loads((checkpoint / "trainer.json").read_text())
    info = {
        "source": str(checkpoint),
        "run": folder.run_id,
        "iteration": state.get("iteration"),
        # Log-probs of a run's episodes are at its training temperature (the sampler's).
        "temperature": config.policy.temperature,
    }
    if not state.get("has_model"):  # iteration 0: the configured model itself
        return resolve_model(config.policy.model), info, None
    model_path, scratch = plain_model_folder(checkpoint)
    return model_path, info, scratch


def _logits_module(model):
    """The policy's forward as the scorer calls it: ids and mask in, logits out."""
    import torch

    class LogitsOfIds(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.model = model

        def forward(self, input_ids, attention_mask):
            # generation.pad_layout's positions: pads get 0 and are masked out anyway.
            positions = (attention_mask.cumsum(-1) - 1).clamp(min=0)
            return self.model(
                input_ids=input_ids, attention_mask=attention_mask, position_ids=positions, use_cache=False
            ).logits

    return LogitsOfIds()


def _load_fp32(model_path: str):
    from ..policy.model import is_peft, load_policy

    model, tokenizer = load_policy(model_path, device="cpu", dtype="float32")
    if is_peft(model):
        model = model.merge_and_unload()
    model.eval()
    return model, tokenizer


def _export_graph(model, path: Path) -> int:
    """Writes model.onnx; returns its opset."""
    import torch

    batch, sequence = torch.export.Dim("batch"), torch.export.Dim("sequence", min=2)
    # Example rows: one left-padded, so the traced graph has seen a mask with zeros.
    ids = torch.full((2, 8), 3, dtype=torch.long)
    mask = torch.ones_like(ids)
    mask[0, :3] = 0
    size = sum(p.numel() * p.element_size() for p in model.parameters())
    with warnings.catch_warnings():
        # "The axis name: batch will not be used...": the exporter keeps its own names for axes.
        warnings.simplefilter("ignore", UserWarning)
        program = torch.onnx.export(
            _logits_module(model),
            (ids, mask),
            dynamo=True,
            input_names=list(INPUT_NAMES),
            output_names=[OUTPUT_NAME],
            external_data=size > _INLINE_WEIGHTS_LIMIT,
            dynamic_shapes={"input_ids": {0: batch, 1: sequence}, "attention_mask": {0: batch, 1: sequence}},
            verbose=False,
        )
    program.save(str(path), external_data=size > _INLINE_WEIGHTS_LIMIT)
    return int(program.model_proto.opset_import[0].version)


def export_onnx(source: str, out: Path | None = None) -> dict:
    """Exports `source` (a run, a checkpoint, a model folder or 'builtin'); returns the manifest
    with the folder it went to under "path"."""
    model_path, info, scratch = _model_folder(source)
    out = Path(out) if out is not None else default_out(source)
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise ExportError(f"{out} exists and is not empty; choose another --out")
    try:
        import onnxscript  # noqa: F401 - the dynamo exporter imports it lazily, mid-export
    except ImportError:
        raise ExportError(
            "export-onnx needs the onnx and onnxscript packages; reinstall the host (scripts/setup-host.sh)"
        ) from None
    import torch

    try:
        model, tokenizer = _load_fp32(model_path)
        out.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.tmp-", dir=out.parent))
        tmp.chmod(0o755)  # mkdtemp's 0700 would make a copied run folder's export unreadable to others
        try:
            opset = _export_graph(model, tmp / MODEL_FILE)
            tokenizer.save_pretrained(tmp)
            vocab = int(model.get_output_embeddings().weight.shape[0])
            (tmp / TOKENS_FILE).write_text(json.dumps([tokenizer.decode([i]) for i in range(vocab)]))
            manifest = {
                "format": FORMAT_VERSION,
                **info,
                "model": MODEL_FILE,
                "tokens": TOKENS_FILE,
                "inputs": list(INPUT_NAMES),
                "output": OUTPUT_NAME,
                "vocabSize": vocab,
                "padId": tokenizer.pad_token_id,
                "eosId": tokenizer.eos_token_id,
                "opset": opset,
                "torch": torch.__version__,
            }
            atomic_write_json(tmp / MANIFEST_FILE, manifest)  # last: its presence marks a whole export
            if out.exists():
                out.rmdir()  # empty (checked above); commit_folder wants the name free
            commit_folder(tmp, out)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
    finally:
        if scratch is not None:
            scratch.cleanup()
    return {**manifest, "path": str(out)}
