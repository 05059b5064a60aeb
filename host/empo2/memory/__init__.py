"""The tip memory of EMPO² (docs/paper.md §4): sentence-embedding keys, per-variation buffers,
score-ranked retrieval, versioned edits by people, crash-safe persistence.

The tips, retrieval results and errors (`tips`) load with the package; the store and the
embedder (numpy, and torch once used) load when first named, so `empo2-host serve` starts without
them (server/device.py says why).
"""

from importlib import import_module

from .tips import (
    CorruptMemory,
    MemoryInUse,
    MemoryReadOnly,
    MemoryStoreError,
    Retrieved,
    Tip,
    TipDeleted,
    UnknownTip,
    VersionConflict,
)

_LATE = {"MemoryStore": ".store", "SentenceEmbedder": ".embedding"}


def __getattr__(name: str):
    if name in _LATE:
        return getattr(import_module(_LATE[name], __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "CorruptMemory",
    "MemoryInUse",
    "MemoryReadOnly",
    "MemoryStore",
    "MemoryStoreError",
    "Retrieved",
    "SentenceEmbedder",
    "Tip",
    "TipDeleted",
    "UnknownTip",
    "VersionConflict",
]
