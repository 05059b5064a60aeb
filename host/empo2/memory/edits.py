"""People's edits of a memory's tips: update and delete with a version check, and edit ids.

A part of MemoryStore (store.py), kept apart because it is one concern: the version check (a
stale expected_version raises VersionConflict carrying the current tip), and edit ids applied
once (the store module's deviation 8: a save retried after a lost connection raises
EditAlreadyApplied instead of applying twice). Callers use MemoryStore; this mixin only works on
its state, under its lock.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

from .tips import PERSON, EditAlreadyApplied, EditIdReused, Tip, TipDeleted, VersionConflict, clean_text, now_iso

if TYPE_CHECKING:
    from .buffer import VariationBuffer

MAX_EDIT_ID = 128


def check_edit_id(edit_id: str | None) -> None:
    """A client's edit id is a short string (or absent)."""
    if edit_id is not None and (not isinstance(edit_id, str) or not 0 < len(edit_id) <= MAX_EDIT_ID):
        raise ValueError(f"an edit id must be a string of 1 to {MAX_EDIT_ID} characters")


def with_edit_id(event: dict, edit_id: str | None) -> dict:
    return event if edit_id is None else dict(event, edit_id=edit_id)


class PersonEdits:
    """update, delete and edit of MemoryStore; state and _write/_emit/_tip are the store's."""

    _lock: threading.RLock
    _tips: list[Tip]
    _index: dict[str, int]
    _buffers: dict[str, VariationBuffer]
    _edits: dict[str, dict]

    def update(
        self, tip_id: str, text: str, expected_version: int, author: str = PERSON, edit_id: str | None = None
    ) -> Tip:
        """Replace a tip's text. Raises VersionConflict (carrying the current tip) when
        expected_version is stale, TipDeleted for a deleted tip, EditAlreadyApplied for an
        edit id applied before. Keys are not re-embedded."""
        text = clean_text(text)
        check_edit_id(edit_id)
        with self._lock:
            tip = self._checked(tip_id, expected_version, edit_id, "update")
            event = {
                "kind": "update",
                "at": now_iso(),
                "tip_id": tip.id,
                "text": text,
                "version": tip.version + 1,
                "author": author,
            }
            return self._commit_edit(with_edit_id(event, edit_id))

    def delete(self, tip_id: str, expected_version: int, author: str = PERSON, edit_id: str | None = None) -> Tip:
        """Mark a tip deleted: its entries leave the buffer; the record and history stay."""
        check_edit_id(edit_id)
        with self._lock:
            tip = self._checked(tip_id, expected_version, edit_id, "delete")
            event = {"kind": "delete", "at": now_iso(), "tip_id": tip.id, "version": tip.version + 1, "author": author}
            return self._commit_edit(with_edit_id(event, edit_id))

    def edit(self, edit_id: str) -> dict | None:
        """What an edit id did, {tip_id, kind, version}, or None when the store never applied it."""
        with self._lock:
            done = self._edits.get(edit_id)
            return dict(done) if done is not None else None

    def _refuse_applied(self, edit_id: str | None, kind: str, tip_id: str | None = None) -> None:
        """Raises EditAlreadyApplied for an edit id this store applied (caller holds the lock)."""
        done = self._edits.get(edit_id) if edit_id is not None else None
        if done is None:
            return
        if done["kind"] != kind or (tip_id is not None and done["tip_id"] != tip_id):
            raise EditIdReused(f"edit id {edit_id!r} was used already, for the {done['kind']} of tip {done['tip_id']}")
        tip = self._tips[self._index[done["tip_id"]]].snapshot()
        raise EditAlreadyApplied(tip, edit_id, kind, done["version"])

    def _remember_edit(self, ev: dict, tip_id: str, version: int) -> None:
        if ev.get("edit_id") is not None:
            self._edits[ev["edit_id"]] = {"tip_id": tip_id, "kind": ev["kind"], "version": version}

    def _checked(self, tip_id: str, expected_version: int, edit_id: str | None = None, kind: str = "update") -> Tip:
        tip = self._tip(tip_id)
        self._refuse_applied(edit_id, kind, tip_id)
        if tip.version != expected_version:
            raise VersionConflict(tip.snapshot(), expected_version)
        if tip.deleted:
            raise TipDeleted(f"tip {tip_id} is deleted; it can be read but not edited")
        return tip

    def _commit_edit(self, event: dict) -> Tip:
        self._write([event])
        tip = self._apply_update(event) if event["kind"] == "update" else self._apply_delete(event)
        self._emit(event["kind"], tip, event["author"])
        return tip.snapshot()

    def _apply_update(self, ev: dict) -> Tip:
        idx = self._index[ev["tip_id"]]
        tip = self._tips[idx]
        tip.text, tip.version, tip.updated = ev["text"], int(ev["version"]), ev["at"]
        tip.history.append(
            {"version": tip.version, "text": tip.text, "author": ev["author"], "at": ev["at"], "kind": "update"}
        )
        self._remember_edit(ev, tip.id, tip.version)
        buf = self._buffers.get(tip.variation_key)
        if buf is not None:
            buf.retext(idx, tip.text)  # duplicates are judged on the current text
        return tip

    def _apply_delete(self, ev: dict) -> Tip:
        idx = self._index[ev["tip_id"]]
        tip = self._tips[idx]
        tip.deleted, tip.version, tip.updated = True, int(ev["version"]), ev["at"]
        tip.history.append(
            {"version": tip.version, "text": tip.text, "author": ev["author"], "at": ev["at"], "kind": "delete"}
        )
        self._remember_edit(ev, tip.id, tip.version)
        buf = self._buffers.get(tip.variation_key)
        if buf is not None:
            buf.remove_tip(idx)
        tip.n_entries = 0
        return tip
