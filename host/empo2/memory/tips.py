"""The memory's plain values: tips, retrieval results, errors; what a valid tip text and score
are. JSON-ready, no behaviour beyond those checks.

A tip is one text, written by the policy after an episode or by a person (docs/paper.md §4 plus this
project's provenance and history). Its entries (key text + action + key vector) live in the
variation's buffer (buffer.py); the tip keeps only what a person or the wire protocol sees.
"""

from __future__ import annotations

import copy
import math
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any

# Authors (the protocol's Author.kind): the policy writes tips in training; the system evicts
# them when the memory is full; every other author is a person, who signs with a name.
POLICY = "policy"
SYSTEM = "system"
PERSON = "person"
RESERVED_AUTHORS = (POLICY, SYSTEM)  # names a person may not sign with


def author_kind(name: str) -> str:
    """The Author.kind of a name a history record carries."""
    return name if name in RESERVED_AUTHORS else PERSON


def now_iso() -> str:
    """Wall-clock time for history records (UTC, milliseconds). Never feeds training maths."""
    return datetime.now(UTC).isoformat(timespec="milliseconds")


def is_person(author: str) -> bool:
    """People may sign with a name; only the policy's own events are not a person's."""
    return author != POLICY


@dataclass
class Tip:
    """One tip and its edit history.

    `version` starts at 1 and grows by one per update or delete; eviction does not change it
    (eviction is no edit, and an evicted tip keeps its last text). `n_entries` counts the tip's
    entries still in its variation's buffer; it reaches 0 when the tip is deleted or evicted.
    `history` holds {version, text, author, at, kind} with kind in add|update|delete|evict.
    """

    id: str
    variation_key: str
    text: str
    score: float | None  # the writing episode's final score; None: a person's tip, unscored
    author: str
    provenance: dict[str, Any]
    version: int = 1
    created: str = ""
    updated: str = ""
    deleted: bool = False
    evicted: bool = False
    n_entries: int = 0
    history: list[dict[str, Any]] = field(default_factory=list)

    @property
    def version_author(self) -> str:
        """Who wrote the current version (`author` wrote the first): the author of the last
        add, update or delete; an eviction is capacity's doing, not a new version."""
        for event in reversed(self.history):
            if event.get("kind") != "evict":
                return event["author"]
        return self.author

    @property
    def live(self) -> bool:
        """Retrievable: neither deleted nor fully evicted."""
        return not self.deleted and not self.evicted

    def to_dict(self, with_history: bool = False) -> dict[str, Any]:
        """A plain JSON dict (a copy: callers may keep it while the store changes)."""
        d = {
            "id": self.id,
            "variation_key": self.variation_key,
            "text": self.text,
            "score": self.score,
            "author": self.author,
            "version_author": self.version_author,
            "provenance": copy.deepcopy(self.provenance),
            "version": self.version,
            "created": self.created,
            "updated": self.updated,
            "deleted": self.deleted,
            "evicted": self.evicted,
            "n_entries": self.n_entries,
        }
        if with_history:
            d["history"] = copy.deepcopy(self.history)
        return d

    def snapshot(self) -> Tip:
        """A detached copy, so the caller never sees later edits mutate what it holds.

        History records are flat dicts the store never changes once written: copying each
        one shallowly is enough, and much cheaper than deepcopy for long listings.
        """
        return replace(
            self,
            provenance=copy.deepcopy(self.provenance),
            history=[dict(h) for h in self.history],
        )


@dataclass(frozen=True)
class Retrieved:
    """One retrieved entry: the tip's current text plus what ranked it.

    `entry` is the entry's global number (its row in keys.f32), stable for the store's life.
    """

    tip_id: str
    text: str
    score: float
    similarity: float
    action: str
    entry: int
    episode_score: float | None = None  # the score its episode earned, as the tip block shows
    # it (None: a text a person wrote, no episode's)

    def to_dict(self) -> dict[str, Any]:
        return {
            "tip_id": self.tip_id,
            "text": self.text,
            "score": self.score,
            "similarity": self.similarity,
            "action": self.action,
            "entry": self.entry,
            "episode_score": self.episode_score,
        }


class MemoryStoreError(Exception):
    """Base class of the memory's errors."""


class MemoryInUse(MemoryStoreError):
    """Another store holds the folder's writer lock (a run that another process trains)."""


class MemoryReadOnly(MemoryStoreError):
    """A change asked of a snapshot (`MemoryStore.read_snapshot`), which only reads."""


class UnknownTip(MemoryStoreError, KeyError):
    """No tip has this id."""

    def __str__(self) -> str:  # KeyError would repr() the message
        return str(self.args[0]) if self.args else "unknown tip"


class TipDeleted(MemoryStoreError):
    """The tip was deleted; it can be read but not edited."""


class VersionConflict(MemoryStoreError):
    """An edit named a version that is no longer current; `current` is the tip as it is now."""

    def __init__(self, current: Tip, expected_version: int):
        super().__init__(
            f"tip {current.id} is at version {current.version}, not {expected_version}; reload it and edit again"
        )
        self.current = current
        self.expected_version = expected_version


class CorruptMemory(MemoryStoreError):
    """The files on disk cannot be replayed (damage before the last record, not a torn tail)."""


class EditAlreadyApplied(MemoryStoreError):
    """A person's edit carried an edit id the store has already applied: a save retried after a
    lost connection. Nothing changed now; `tip` is the tip as it is, `version` the version that
    edit made (for an add, 1)."""

    def __init__(self, tip: Tip, edit_id: str, kind: str, version: int):
        super().__init__(f"edit {edit_id} ({kind} of tip {tip.id}) was applied already")
        self.tip, self.edit_id, self.kind, self.version = tip, edit_id, kind, version


class EditIdReused(MemoryStoreError, ValueError):
    """An edit id the store recorded for a different edit (another tip or another kind)."""


# --- what a valid tip text and score are ----------------------------------------------------


def clean_text(text: str) -> str:
    """A tip's text, stripped; an empty one is refused."""
    text = str(text).strip()
    if not text:
        raise ValueError("a tip's text cannot be empty")
    return text


UNSCORED_RANK = 100.0
"""Where a tip without a score (a person's, added without one) ranks: the top of the score
scale, so a person's advice ranks above the policy's own. Its `score` stays None: no episode
earned it."""


def rank_score(score: float | None) -> float:
    """The score a tip ranks by in retrieval."""
    return UNSCORED_RANK if score is None else score


def finite_score(score: float | None) -> float | None:
    """A tip's score as a float (None stays None); NaN and infinities are refused."""
    if score is None:
        return None
    score = float(score)
    if not math.isfinite(score):
        raise ValueError(f"a tip's score must be a finite number, not {score}")
    return score
