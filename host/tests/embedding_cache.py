"""The real sentence embedder, with the model's vectors kept on disk between test sessions.

EMPO2_TEST_EMBEDDING_CACHE names a folder (scripts/mutation.sh sets it). A mutation run starts
one pytest session per mutant, and in each the memory tests spent more time importing
sentence_transformers and loading MiniLM (about 10 s on an idle core) than testing the store.
With the folder set, a text's vector is computed by the real model the first time any session
asks for it and read back from the folder afterwards: the same float32 bits, since the file name
is a digest of everything the bits depend on (the model's files, the torch build and thread
count, the embedder's device, batch size and length grid, and the text). The in-memory LRU cache,
`n_embedded` and everything above `_embed` are the real embedder's code.

Unset, or while mutmut runs a mutant of embedding.py itself (MUTANT_UNDER_TEST is mutmut's name
of the active mutant), `memory_embedder` is the plain SentenceEmbedder: there the model code is
what is under test, so every text goes through the model. Also plain in mutmut's statistics run
("stats"), which records which tests reach which function: every test that embeds then reaches
the model code, and so runs, with the real model, for every mutant of embedding.py.
"""

from __future__ import annotations

import hashlib
import os
import uuid
from pathlib import Path

import numpy as np

from empo2.memory.embedding import DIM, PACKAGE, SentenceEmbedder, bundled_model_path

CACHE_ENV = "EMPO2_TEST_EMBEDDING_CACHE"
UNCACHED_MUTANTS = "empo2.memory.embedding."  # mutants of the embedder run the model itself
STATS_RUN = "stats"  # mutmut's MUTANT_UNDER_TEST while it records which tests reach what


def memory_embedder(**settings) -> SentenceEmbedder:
    """The embedder for a test: recorded vectors where the environment asks for them."""
    folder = os.environ.get(CACHE_ENV)
    mutant = os.environ.get("MUTANT_UNDER_TEST", "")
    if not folder or mutant == STATS_RUN or mutant.startswith(UNCACHED_MUTANTS):
        return SentenceEmbedder(**settings)
    return RecordedEmbedder(Path(folder), **settings)


def _model_identity() -> str:
    """The bundled model's package version and its files' names, sizes and modification times."""
    from importlib.metadata import version

    import torch

    model = bundled_model_path()
    files = sorted(p for p in model.rglob("*") if p.is_file())
    stats = [(str(p.relative_to(model)), p.stat().st_size, p.stat().st_mtime_ns) for p in files]
    return f"{PACKAGE}=={version(PACKAGE)} {stats} torch=={torch.__version__}"


class RecordedEmbedder(SentenceEmbedder):
    """SentenceEmbedder whose model passes are recorded in `folder`, one file per text."""

    _identity: str | None = None  # per process: listing the model's files once is enough

    def __init__(self, folder: Path, **settings):
        super().__init__(**settings)
        self.folder = folder
        self.folder.mkdir(parents=True, exist_ok=True)

    def _path(self, text: str) -> Path:
        import torch

        if RecordedEmbedder._identity is None:
            RecordedEmbedder._identity = _model_identity()
        key = (
            f"{RecordedEmbedder._identity} threads={torch.get_num_threads()} "
            f"device={self.device} batch={self.batch_size} grid={self.length_grid}\n{text}"
        )
        return self.folder / f"{hashlib.sha256(key.encode()).hexdigest()}.f32"

    def _embed(self, texts: list[str]) -> np.ndarray:
        out = np.empty((len(texts), DIM), dtype=np.float32)
        paths = [self._path(t) for t in texts]
        missing = []
        for row, path in enumerate(paths):
            try:
                out[row] = np.fromfile(path, dtype=np.float32)  # a short file raises: recompute
            except (OSError, ValueError):
                missing.append(row)
        if missing:
            fresh = super()._embed([texts[r] for r in missing])  # counts them in n_embedded
            for row, vec in zip(missing, fresh):
                out[row] = vec
                partial = paths[row].with_suffix(f".{uuid.uuid4().hex}.part")
                partial.write_bytes(vec.tobytes())
                os.replace(partial, paths[row])  # another session never reads half a vector
        self.n_embedded += len(texts) - len(missing)  # recorded texts count as model passes too
        return out
