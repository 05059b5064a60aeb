"""The tip memory of EMPO² (EMPO2.md §4): sentence-embedding keys, per-variation buffers,
score-ranked retrieval, versioned edits by people, crash-safe persistence."""

from .embedding import SentenceEmbedder
from .records import (
    CorruptMemory,
    MemoryStoreError,
    Retrieved,
    Tip,
    TipDeleted,
    UnknownTip,
    VersionConflict,
)
from .store import MemoryStore

__all__ = [
    "CorruptMemory",
    "MemoryStore",
    "MemoryStoreError",
    "Retrieved",
    "SentenceEmbedder",
    "Tip",
    "TipDeleted",
    "UnknownTip",
    "VersionConflict",
]
