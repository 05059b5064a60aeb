"""The tip memory of docs/paper.md §4: per-variation buffers, batched retrieval, edits, persistence.

Use:
    store = MemoryStore.open(run_dir / "memory", SentenceEmbedder())   # None: in memory only
    store.add_episode_tip("power-component/3", tip_text, steps=[(key_text, action), ...],
                          score=final_score, provenance={"run": ..., "iteration": ..., ...})
    store.add_episode_tips([EpisodeTip(...), ...])   # an iteration's: one embedding call, one write
    hits = store.retrieve("power-component/3", [key_text_of_this_step, ...])  # per query

Follows the reference code: a policy tip becomes one entry per step of its episode, entry =
(key text of the step, action taken there, tip); key = embedding of the key text. Retrieval keeps
cosine > threshold and ranks by the stored episode score (not by similarity), at most top_k.

Deviations and additions (numbered, see also docs/paper.md §7):
1. Buffers are keyed by any string (the trainer passes f"{task}/{variation}"), not slots 0-4.
2. Retrieval is one matrix product per call over a preallocated float32 key matrix, not a
   Python loop over entries; ties in score go to the more similar, then the newer entry.
3. Persistence (append-only log + key file, crash-safe), provenance, versioned edits by people.
4. Editing a tip's text does not change its keys: keys embed the *situation* a tip was written
   for (the step texts), which an edit of the advice does not change; and re-embedding on every
   keystroke-save would stall the training thread. Text is looked up by tip id at retrieval
   time, so an edit shows in the very next retrieval. (A person's tip without key_text is keyed
   by its first text, and keeps that key after edits too.)
5. Deleting a tip removes its entries from the buffer at once (frees capacity); it stays in
   the history, marked deleted, and is never retrieved.
6. Ids: policy tips "t000001", people's tips "p000001", two counters, deterministic given the
   sequence of operations. Separate counters keep a person's tip id stable when a resumed run
   re-applies it after rolling back to a checkpoint.
7. Person tips have one entry with action "" (no action suffix when rendered).
8. A person's add, update or delete may carry an edit id (chosen by the client): the store
   records it in the event and applies an edit id once. A save retried after a lost connection
   raises EditAlreadyApplied instead of applying twice (for an update or delete the version check
   alone would already refuse the duplicate, but as a conflict the client could not tell from
   someone else's edit).
9. A tip is not stored twice in one variation: an add (the policy's or a person's) whose text is
   exactly the current text of a live tip there returns that tip and makes no new one. The tip
   stored first keeps its id (what episodes and edits refer to), provenance and history. Texts
   made identical by a person's edit stay side by side (the edit was asked for), and a deleted
   or evicted tip's text can be stored again.
10. What a repeated tip text keeps (docs/algorithm.md, deviation 26): when the policy writes a
   text that is live in the variation as the policy wrote it, the new episode's entries (key
   text, action) join that tip, each entry with its own episode's score ("extend" in the log),
   as the reference code stores every entry with its action and score; retrieval ranks each
   entry by its own score. The tip's score is the best of its episodes': the score its best
   entry is ranked and shown with. A tip whose current text a person wrote is not extended: the
   policy's episode is no evidence for the person's text.

Threading: one RLock guards all state; embedding (slow) happens outside it, so a person's edit
never waits for the model and is visible to the next retrieval. on_change runs under the lock,
in order; it must not block (post to a queue or an event loop).
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..atomic import atomic_write_json
from ..config import MemoryConfig
from .buffer import VariationBuffer, rank
from .edits import PersonEdits, check_edit_id
from .persistence import FORMAT, EventFiles, EventLog, person_events_after
from .tips import (
    PERSON,
    POLICY,
    SYSTEM,
    CorruptMemory,
    MemoryReadOnly,
    Retrieved,
    Tip,
    UnknownTip,
    clean_text,
    finite_score,
    is_person,
    now_iso,
    rank_score,
)

log = logging.getLogger(__name__)

DEFAULTS = MemoryConfig()  # capacity, threshold and top_k as a run's config has them


@dataclass(frozen=True)
class EpisodeTip:
    """The policy's tip about one episode, as `MemoryStore.add_episode_tips` takes it: its text,
    the (key text, action) of each step it is keyed by, the episode's score and provenance
    ({run, iteration, episode, step, score}; score is filled in if missing)."""

    variation_key: str
    text: str
    steps: Sequence[tuple[str, str]]
    score: float
    provenance: dict | None = None


class MemoryStore(PersonEdits):
    """Tips and their entries for every task variation; see the module docstring."""

    def __init__(self, embedder: Any, capacity: int = DEFAULTS.capacity, on_change: Callable | None = None):
        """In memory only; use `MemoryStore.open(folder, ...)` for a persistent store.

        embedder: anything with encode(texts) -> float32 (n, dim), L2-normalised rows, and dim.
        """
        if capacity < 1:
            raise ValueError("memory capacity must be at least 1 entry per variation")
        self.embedder = embedder
        self.capacity = capacity
        self.dim = int(embedder.dim)
        self.on_change = on_change
        self.folder: Path | None = None
        self._lock = threading.RLock()
        self._tips: list[Tip] = []  # creation order; a tip's position is its internal index
        self._index: dict[str, int] = {}
        self._buffers: dict[str, VariationBuffer] = {}
        self._next_seq = {POLICY: 1, PERSON: 1}
        self._next_entry = 0
        self._edits: dict[str, dict] = {}  # edit id -> {tip_id, kind, version}, rebuilt by replay
        self._log: EventLog | None = None
        self._read_only = False  # a snapshot (MemoryStore.read_snapshot) of another process's store
        self._replayed = 0  # bytes of events.jsonl replayed into this state
        self._batch: _Batch | None = None  # what `_one_write` holds back until its one append

    # --- opening, replay, rollback ---------------------------------------------------------

    @classmethod
    def open(
        cls,
        folder: Path | str | None,
        embedder: Any,
        capacity: int = DEFAULTS.capacity,
        on_change: Callable | None = None,
        rollback_to: dict | None = None,
    ) -> MemoryStore:
        """Open (or create) the store saved in `folder`; None keeps it in memory only.

        rollback_to: a `marker()` from a training checkpoint. Both files are cut back to it;
        events written after it by people are re-applied where their tip still exists (a
        person's edit is never silently lost), the rest are dropped with a warning.
        """
        store = cls(embedder, capacity)
        if folder is None:
            if rollback_to is not None:
                raise ValueError("rollback_to needs a memory folder; an in-memory store has none")
            store.on_change = on_change
            return store
        store.folder = Path(folder)
        events = EventLog(store.folder, store.dim)
        try:
            later: list[tuple[dict, np.ndarray | None]] = []
            if rollback_to is None:
                store._replay(events, events.events_bytes)
            else:
                later = person_events_after(events, rollback_to)
                cut = int(rollback_to["events_bytes"]), int(rollback_to["keys_bytes"])
                store._replay(events, cut[0])
                # Before cutting: a wrong marker loses nothing.
                store._check_marker(rollback_to, kept_rows=cut[1] // events.row_bytes)
                events.truncate_to(*cut)
            if events.events_bytes == 0:
                events.append(
                    [
                        {
                            "kind": "header",
                            "format": FORMAT,
                            "dim": store.dim,
                            "capacity": store.capacity,
                            "at": now_iso(),
                        }
                    ]
                )
            events.cut_orphan_keys(store._next_entry)
            store._log = events
            store._reapply(later)
        except BaseException:
            events.close()
            raise
        store.on_change = on_change  # set last: replay and re-application are not news
        return store

    @classmethod
    def read_snapshot(cls, folder: Path | str, embedder: Any, capacity: int = DEFAULTS.capacity) -> MemoryStore:
        """The store saved in `folder` as it is now, read without taking the folder from its
        writer: the tips of a run that another process trains (a terminal's `train`, another
        window's host), to list, read and retrieve. It writes nothing and does not follow the
        writer's later changes (take another snapshot); a change raises MemoryReadOnly."""
        store = cls(embedder, capacity)
        store.folder = Path(folder)
        store._replay(EventFiles(store.folder, store.dim), None)
        store._read_only = True
        return store

    def catch_up(self) -> list[dict]:
        """A snapshot's next look at its folder: replays what the writer appended since the last
        one, and returns those changes as `on_change` would have reported them to the writer's
        listener ({kind, tip, author}, each tip as it is now), in their order."""
        if not self._read_only:
            raise ValueError("only a snapshot (MemoryStore.read_snapshot) catches up with its folder")
        with self._lock:
            changes = self._replay(EventFiles(self.folder, self.dim), None, start=self._replayed)
            return [
                {"kind": kind, "tip": self._tip(tip_id).to_dict(), "author": author} for kind, tip_id, author in changes
            ]

    def _replay(self, events: EventFiles, stop: int | None, start: int = 0) -> list[tuple[str, str, str]]:
        """Rebuild the state from log bytes [start, stop), keys from keys.f32 (no embedding).
        Returns what changed, (kind, tip id, author) in order; a snapshot catches up from where
        its last replay ended (`_replayed`)."""
        keys = events.keys_view()
        changes: list[tuple[str, str, str]] = []
        for ev, end in events.iter_events(start=start, stop=stop):
            kind = ev.get("kind")
            if start == 0:
                self._check_header(ev)
            elif kind == "add":
                gone = self._apply_add(ev, _event_keys(ev, keys, events.keys_path))
                changes.append(("add", ev["tip"]["id"], ev["tip"]["author"]))
                changes += [("evict", other.id, SYSTEM) for other in gone]
            elif kind == "extend":
                gone = self._apply_extend(ev, _event_keys(ev, keys, events.keys_path))
                changes.append(("extend", ev["tip_id"], POLICY))
                changes += [("evict", other.id, SYSTEM) for other in gone]
            elif kind in ("update", "delete"):
                (self._apply_update if kind == "update" else self._apply_delete)(ev)
                changes.append((kind, ev["tip_id"], ev["author"]))
            elif kind != "evict":  # evictions follow from the adds; their lines are for readers
                log.warning("memory: skipped an event of unknown kind %r in the log", kind)
            start = self._replayed = end
        return changes

    def _check_header(self, ev: dict) -> None:
        if ev.get("kind") != "header":
            raise CorruptMemory(f"{self.folder}: events.jsonl does not start with a header")
        if int(ev["dim"]) != self.dim:
            raise ValueError(
                f"memory in {self.folder} holds {ev['dim']}-d keys but the embedder makes {self.dim}-d ones"
            )
        if int(ev["capacity"]) != self.capacity:
            raise ValueError(
                f"memory in {self.folder} was created with capacity {ev['capacity']}; "
                f"open it with capacity={ev['capacity']}"
            )

    def _check_marker(self, marker: dict, kept_rows: int) -> None:
        want = tuple(marker.get(k) for k in ("next_policy_seq", "next_person_seq", "next_entry"))
        got = (self._next_seq[POLICY], self._next_seq[PERSON], self._next_entry)
        if want != got:
            raise CorruptMemory(
                f"memory in {self.folder} does not match the checkpoint's marker "
                f"(counters {got} vs {want}); was the marker taken from another run's memory?"
            )
        # The log up to the marker references every entry it made: a marker that keeps fewer key
        # rows would cut rows the kept events need, and the folder would no longer open.
        if kept_rows < self._next_entry:
            raise CorruptMemory(
                f"the checkpoint's memory marker keeps {kept_rows} key rows of {self.folder}, "
                f"but the log up to it references {self._next_entry}"
            )

    def _reapply(self, later: list[tuple[dict, np.ndarray | None]]) -> None:
        """Re-apply people's events written after the marker, in their original order."""
        with self._lock:
            for ev, keys in later:
                kind = ev["kind"]
                if kind == "add":
                    t = ev["tip"]
                    steps = [(kt, a) for kt, a in ev["entries"]]
                    tip = self._add(
                        t["variation_key"],
                        t["text"],
                        t["score"],
                        t["author"],
                        t["provenance"],
                        steps,
                        keys,
                        at=ev["at"],
                        tip_id=t["id"],
                        edit_id=ev.get("edit_id"),
                    )
                    if tip.id != t["id"]:
                        log.warning(
                            "memory: a person's tip %s duplicates %s after the rollback; not re-added", t["id"], tip.id
                        )
                    continue
                idx = self._index.get(ev["tip_id"])
                if idx is None or self._tips[idx].deleted:
                    log.warning(
                        "memory: dropped %s's %s of tip %s made after the checkpoint: the tip %s",
                        ev["author"],
                        kind,
                        ev["tip_id"],
                        "does not exist at the checkpoint" if idx is None else "is deleted",
                    )
                    continue
                self._commit_edit(dict(ev, version=self._tips[idx].version + 1))

    # --- adding ------------------------------------------------------------------------------

    def add_episode_tip(
        self,
        variation_key: str,
        text: str,
        steps: Sequence[tuple[str, str]],
        score: float,
        provenance: dict | None = None,
    ) -> Tip:
        """Store the policy's tip about one episode: one entry per step (key text, action).
        `add_episode_tips` with one tip; see there."""
        return self.add_episode_tips([EpisodeTip(variation_key, text, steps, score, provenance)])[0]

    def add_episode_tips(self, tips: Sequence[EpisodeTip]) -> list[Tip]:
        """Store the policy's tips about several episodes (an iteration's), in their order, as
        one batch: one embedding call for the key texts of all their steps, then one append to
        the log (every key row, then every event line: one fsync each), then their changes to
        `on_change`. Each tip is stored as a lone add would store it, after the ones before it
        (a repeated text in the batch meets the tip stored before it, deviations 9 and 10).

        Returns, per tip, the new tip, or the existing tip when its text is already stored in
        the variation (deviation 9) or every entry was an exact duplicate. All or nothing: a
        tip refused (no steps, an empty text, a score that is not finite) or a failed write
        leaves the store as it was.
        """
        tips = [
            EpisodeTip(
                _check_variation_key(t.variation_key),
                clean_text(t.text),
                [(str(k), str(a)) for k, a in t.steps],
                finite_score(t.score),
                t.provenance,
            )
            for t in tips
        ]
        if any(not t.steps for t in tips):
            raise ValueError("an episode tip needs at least one step to key it")
        keys = self.embedder.encode([k for t in tips for k, _ in t.steps])
        out, first = [], 0
        with self._lock, self._one_write():
            for t in tips:
                rows = keys[first : first + len(t.steps)]
                first += len(t.steps)
                out.append(self._add(t.variation_key, t.text, t.score, POLICY, t.provenance, list(t.steps), rows))
        return out

    def add_tip(
        self,
        variation_key: str,
        text: str,
        score: float | None,
        author: str = PERSON,
        key_text: str | None = None,
        provenance: dict | None = None,
        edit_id: str | None = None,
    ) -> Tip:
        """A person's tip: one entry keyed by `key_text`, or by the tip text when None.
        score None: unscored (it ranks at UNSCORED_RANK). An edit id already applied raises
        EditAlreadyApplied (see deviation 8)."""
        check_edit_id(edit_id)
        key = str(key_text) if key_text is not None else clean_text(text)
        keys = self.embedder.encode([key])
        with self._lock:
            return self._add(variation_key, text, score, author, provenance, [(key, "")], keys, edit_id=edit_id)

    def _add(
        self,
        variation_key: str,
        text: str,
        score: float,
        author: str,
        provenance: dict | None,
        steps: list[tuple[str, str]],
        keys: np.ndarray,
        at: str | None = None,
        tip_id: str | None = None,
        edit_id: str | None = None,
    ) -> Tip:
        """Dedupe, log, apply, announce one add. Caller holds the lock; keys (len(steps), dim)."""
        self._refuse_applied(edit_id, "add")
        text, score = clean_text(text), finite_score(score)
        _check_variation_key(variation_key)
        buf = self._buffers.get(variation_key)
        same_text = buf.tip_with_text(text) if buf is not None else None
        if same_text is not None:  # deviation 9
            if author == POLICY and not is_person(self._tips[same_text].version_author):
                return self._extend(same_text, score, steps, keys, at)  # deviation 10
            return self._tips[same_text].snapshot()
        keep: list[int] = []
        seen: set[tuple[str, str]] = set()
        duplicate_of: int | None = None
        for i, (kt, act) in enumerate(steps):
            owner = buf.owner(kt, act, text) if buf is not None else None
            if owner is not None:
                duplicate_of = owner if duplicate_of is None else duplicate_of
            elif (kt, act) not in seen:  # the same step twice in one episode: one entry
                seen.add((kt, act))
                keep.append(i)
        if not keep:
            return self._tips[duplicate_of].snapshot()  # type: ignore[index]
        prov = dict(provenance or {})
        if author == POLICY:
            prov.setdefault("score", score)
        at = at or now_iso()
        event = {
            "kind": "add",
            "at": at,
            "tip": {
                "id": tip_id or self._new_id(author),
                "variation_key": variation_key,
                "text": text,
                "score": score,
                "author": author,
                "provenance": prov,
            },
            "entries": [list(steps[i]) for i in keep],
            "first_entry": self._next_entry,
        }
        if edit_id is not None:
            event["edit_id"] = edit_id
        doomed = buf.evicted_by(len(keep)) if buf is not None else {}
        evictions = [
            {"kind": "evict", "at": at, "tip_id": self._tips[t].id, "variation_key": variation_key}
            for t, c in doomed.items()
            if c == self._tips[t].n_entries
        ]
        kept_keys = np.ascontiguousarray(keys[keep], dtype=np.float32)
        self._write([event] + evictions, kept_keys)  # write-ahead: a failed write changes nothing
        gone = self._apply_add(event, kept_keys)
        tip = self._tips[self._index[event["tip"]["id"]]]
        self._emit("add", tip, author)
        for other in gone:
            self._emit("evict", other, SYSTEM)
        return tip.snapshot()

    def _extend(self, idx: int, score: float, steps: list[tuple[str, str]], keys: np.ndarray, at: str | None) -> Tip:
        """Deviation 10: the policy's tip whose text is already live in the variation (as the
        policy wrote it) gets the new episode's entries, each with that episode's score. Caller
        holds the lock; exact duplicates of live entries are dropped as for an add."""
        tip = self._tips[idx]
        buf = self._buffers[tip.variation_key]
        keep: list[int] = []
        seen: set[tuple[str, str]] = set()
        for i, (kt, act) in enumerate(steps):
            if buf.owner(kt, act, tip.text) is None and (kt, act) not in seen:
                seen.add((kt, act))
                keep.append(i)
        if not keep:
            return tip.snapshot()
        at = at or now_iso()
        event = {
            "kind": "extend",
            "at": at,
            "tip_id": tip.id,
            "variation_key": tip.variation_key,
            "score": score,
            "entries": [list(steps[i]) for i in keep],
            "first_entry": self._next_entry,
        }
        doomed = buf.evicted_by(len(keep))
        evictions = [
            {"kind": "evict", "at": at, "tip_id": self._tips[t].id, "variation_key": tip.variation_key}
            for t, c in doomed.items()
            if t != idx and c == self._tips[t].n_entries
        ]
        kept_keys = np.ascontiguousarray(keys[keep], dtype=np.float32)
        self._write([event] + evictions, kept_keys)  # write-ahead, as an add
        gone = self._apply_extend(event, kept_keys)
        self._emit("extend", tip, POLICY)
        for other in gone:
            self._emit("evict", other, SYSTEM)
        return tip.snapshot()

    def _apply_extend(self, ev: dict, keys: np.ndarray) -> list[Tip]:
        """Append an extend's entries to its tip; the tip's score becomes the best of its
        episodes' (deviation 10). Returns tips whose last entry was evicted."""
        idx = self._index.get(ev["tip_id"])
        if idx is None:
            raise CorruptMemory(f"tip {ev['tip_id']} is extended before it is added")
        tip = self._tips[idx]
        score = finite_score(ev["score"])
        if score is not None and (tip.score is None or score > tip.score):
            tip.score = score
        first = int(ev["first_entry"])
        self._next_entry = max(self._next_entry, first + len(ev["entries"]))
        tip.n_entries += len(ev["entries"])
        evicted = self._buffers[tip.variation_key].append(
            keys, [e[0] for e in ev["entries"]], [e[1] for e in ev["entries"]], idx, tip.text, rank_score(score), first
        )
        return self._account_evictions(evicted, ev["at"])

    def _new_id(self, author: str) -> str:
        kind = POLICY if author == POLICY else PERSON
        return f"{'t' if kind == POLICY else 'p'}{self._next_seq[kind]:06d}"

    def _apply_add(self, ev: dict, keys: np.ndarray) -> list[Tip]:
        """Create the tip and append its entries; returns tips whose last entry was evicted."""
        t, at = ev["tip"], ev["at"]
        if t["id"] in self._index:
            raise CorruptMemory(f"tip id {t['id']} is added twice")
        tip = Tip(
            id=t["id"],
            variation_key=t["variation_key"],
            text=t["text"],
            score=finite_score(t["score"]),
            author=t["author"],
            provenance=t["provenance"],
            created=at,
            updated=at,
            n_entries=len(ev["entries"]),
            history=[{"version": 1, "text": t["text"], "author": t["author"], "at": at, "kind": "add"}],
        )
        idx = len(self._tips)
        self._tips.append(tip)
        self._index[tip.id] = idx
        kind = POLICY if tip.author == POLICY else PERSON
        self._next_seq[kind] = max(self._next_seq[kind], int(tip.id[1:]) + 1)
        first = int(ev["first_entry"])
        self._next_entry = max(self._next_entry, first + len(ev["entries"]))
        self._remember_edit(ev, tip.id, 1)
        buf = self._buffers.get(tip.variation_key)
        if buf is None:
            buf = self._buffers[tip.variation_key] = VariationBuffer(self.capacity, self.dim)
        evicted = buf.append(
            keys,
            [e[0] for e in ev["entries"]],
            [e[1] for e in ev["entries"]],
            idx,
            tip.text,
            rank_score(tip.score),
            first,
        )
        return self._account_evictions(evicted, at)

    def _account_evictions(self, evicted, at: str) -> list[Tip]:
        """Counts the evicted rows off their tips; returns the tips left with none."""
        gone = []
        for other_idx, count in evicted.items():
            other = self._tips[other_idx]
            other.n_entries -= count
            if other.n_entries == 0 and other.live:
                other.evicted = True
                other.history.append(
                    {"version": other.version, "text": other.text, "author": SYSTEM, "at": at, "kind": "evict"}
                )
                gone.append(other)
        return gone

    # --- retrieval ---------------------------------------------------------------------------

    def retrieve(
        self,
        variation_key: str,
        query_texts: Sequence[str],
        threshold: float = DEFAULTS.similarity_threshold,
        top_k: int = DEFAULTS.top_k,
        keep_edited_actions: bool = DEFAULTS.edited_tip_actions == "keep",
    ) -> list[list[Retrieved]]:
        """For each query text, up to top_k entries with cosine > threshold, best score first.

        An entry of a tip whose current text a person wrote comes without its action unless
        `keep_edited_actions` (memory.edited_tip_actions): the action belongs to the episode the
        old text described.

        One embedding call for the m queries, one product Q (m, dim) @ K (n, dim).T over the
        variation's entries. An unknown or empty variation gives m empty lists (no embedding).
        """
        queries = list(query_texts)
        with self._lock:
            buf = self._buffers.get(variation_key)
            if buf is None or buf.n == 0 or top_k <= 0:
                return [[] for _ in queries]
        q = self.embedder.encode(queries)  # outside the lock: edits must not wait for the model
        with self._lock:
            if buf.n == 0:
                return [[] for _ in queries]
            sims = buf.similarities(q)
            out = []
            for i, rows in enumerate(rank(sims, buf.scores[: buf.n], threshold, top_k)):
                hits = []
                for r in rows.tolist():
                    tip = self._tips[int(buf.tip[r])]
                    stale = not keep_edited_actions and is_person(tip.version_author)
                    hits.append(
                        Retrieved(
                            tip.id,
                            tip.text,
                            float(buf.scores[r]),
                            float(sims[i, r]),
                            "" if stale else buf.actions[r],
                            int(buf.entry[r]),
                            None if stale or tip.score is None else float(buf.scores[r]),
                        )
                    )
                out.append(hits)
            return out

    # --- reading -------------------------------------------------------------------------------

    def get(self, tip_id: str) -> Tip:
        with self._lock:
            return self._tip(tip_id).snapshot()

    def history(self, tip_id: str) -> list[dict]:
        with self._lock:
            return self._tip(tip_id).snapshot().history

    def list_tips(
        self,
        variation_key: str | None = None,
        search: str | None = None,
        author: str | None = None,
        include_deleted: bool = False,
        offset: int = 0,
        limit: int = 100,
        include_evicted: bool = False,
    ) -> tuple[list[Tip], int]:
        """A page of tips, newest first, and how many match in all.

        search: case-insensitive substring of the text. Evicted tips are left out unless
        include_evicted (a long run evicts far more tips than it keeps).
        """
        needle = search.casefold() if search else None
        with self._lock:
            matches = [
                t
                for t in reversed(self._tips)
                if (variation_key is None or t.variation_key == variation_key)
                and (author is None or t.author == author)
                and (include_deleted or not t.deleted)
                and (include_evicted or not t.evicted)
                and (needle is None or needle in t.text.casefold())
            ]
            page = matches[max(0, offset) : max(0, offset) + max(0, limit)]
            return [t.snapshot() for t in page], len(matches)

    def entries(self, variation_key: str) -> list[dict]:
        """The variation's live entries, oldest first: {entry, tip_id, key_text, action, score}."""
        with self._lock:
            buf = self._buffers.get(variation_key)
            if buf is None:
                return []
            return [
                {
                    "entry": int(buf.entry[r]),
                    "tip_id": self._tips[int(buf.tip[r])].id,
                    "key_text": buf.key_texts[r],
                    "action": buf.actions[r],
                    "score": float(buf.scores[r]),
                }
                for r in range(buf.n)
            ]

    def variation_keys(self) -> list[str]:
        with self._lock:
            return sorted(self._buffers)

    def count(self, variation_key: str | None = None) -> int:
        """Retrievable tips (neither deleted nor evicted), in one variation or in all."""
        with self._lock:
            return sum(1 for t in self._tips if t.live and (variation_key is None or t.variation_key == variation_key))

    # --- checkpoints, snapshots ------------------------------------------------------------

    def marker(self) -> dict:
        """Where the files stand now; save it in a training checkpoint for `rollback_to`.

        An in-memory store has no files: its byte counts are None.
        """
        with self._lock:
            on_disk = self._log is not None
            return {
                "format": FORMAT,
                "events_bytes": self._log.events_bytes if on_disk else None,
                "keys_bytes": self._log.keys_rows * self._log.row_bytes if on_disk else None,
                "next_policy_seq": self._next_seq[POLICY],
                "next_person_seq": self._next_seq[PERSON],
                "next_entry": self._next_entry,
            }

    def snapshot_json(self, path: Path | str) -> None:
        """Write a readable dump of every tip with its history, atomically."""
        with self._lock:
            payload = {
                "format": "empo2-memory-snapshot/1",
                "written": now_iso(),
                "capacity": self.capacity,
                "variations": {k: {"entries": b.n} for k, b in sorted(self._buffers.items())},
                "tips": [t.to_dict(with_history=True) for t in self._tips],
            }
        atomic_write_json(Path(path), payload)

    def close(self) -> None:
        with self._lock:
            if self._log is not None:
                self._log.close()
                self._log = None

    def __enter__(self) -> MemoryStore:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # --- helpers -------------------------------------------------------------------------------

    def _tip(self, tip_id: str) -> Tip:
        idx = self._index.get(tip_id)
        if idx is None:
            raise UnknownTip(f"no tip has id {tip_id!r}")
        return self._tips[idx]

    def _write(self, events: list[dict], keys: np.ndarray | None = None) -> None:
        if self._read_only:  # write-ahead: refused before any state changes
            raise MemoryReadOnly(f"the memory in {self.folder} is another process's; it can be read here, not changed")
        if self._batch is not None:  # inside `_one_write`: appended with the rest of the batch
            self._batch.events += events
            if keys is not None and len(keys):
                self._batch.keys.append(keys)
        elif self._log is not None:
            self._log.append(events, keys)

    def _emit(self, kind: str, tip: Tip, author: str) -> None:
        if self.on_change is None:
            return
        change = {"kind": kind, "tip": tip.to_dict(), "author": author}  # the tip as it is now
        if self._batch is not None:  # announced once the batch is written
            self._batch.changes.append(change)
            return
        self._announce(change)

    def _announce(self, change: dict) -> None:
        try:
            self.on_change(change)
        except Exception:  # a listener's bug must not break training; the change is committed
            log.exception("memory: on_change listener failed on %s of %s", change["kind"], change["tip"]["id"])

    @contextlib.contextmanager
    def _one_write(self):
        """Changes made inside apply at once but reach the log as one append when the block
        ends (the key rows of them all, then their event lines: the crash-safety order of a
        single add), and `on_change` hears of them after it. If the block or the append fails,
        the files are cut back to where they were and the state is replayed from them: nothing
        of the block stays. Caller holds the lock, so no change of another thread interleaves."""
        if self._batch is not None:
            raise RuntimeError("memory: batches do not nest")
        cut = (self._log.events_bytes, self._log.keys_rows * self._log.row_bytes) if self._log else None
        self._batch = batch = _Batch()
        try:
            yield
            self._batch = None
            if batch.events and self._log is not None:
                self._log.append(batch.events, np.concatenate(batch.keys) if batch.keys else None)
        except BaseException:
            self._batch = None
            if batch.events:
                self._restore(cut)
            raise
        for change in batch.changes:
            self._announce(change)

    def _restore(self, cut: tuple[int, int] | None) -> None:
        """The state the log holds up to `cut` (events bytes, keys bytes), after a failed batch."""
        if cut is None:  # an in-memory store has no log to replay: its tips were checked first
            log.error("memory: a batch failed half-way in a store without files; its state stays")
            return
        with contextlib.suppress(OSError):  # a disk that refused the append may refuse this too
            self._log.truncate_to(*cut)
        fresh = MemoryStore(self.embedder, self.capacity)
        fresh._replay(self._log, cut[0])
        for name, value in vars(fresh).items():
            if name not in _SETTINGS:
                setattr(self, name, value)


def _check_variation_key(variation_key: Any) -> str:
    if not isinstance(variation_key, str) or not variation_key:
        raise ValueError("variation_key must be a non-empty string")
    return variation_key


@dataclass
class _Batch:
    """What `MemoryStore._one_write` holds back: event lines, key rows, changes to announce."""

    events: list[dict] = field(default_factory=list)
    keys: list[np.ndarray] = field(default_factory=list)
    changes: list[dict] = field(default_factory=list)


# What a store is set up with, not what it holds: `_restore` keeps these and replays the rest.
_SETTINGS = frozenset({"embedder", "capacity", "dim", "on_change", "folder", "_lock", "_log", "_read_only", "_batch"})


def _event_keys(ev: dict, keys: np.ndarray, keys_path) -> np.ndarray:
    """The key rows an add or extend event's entries point at (float32, (k, dim)); a log that
    needs more rows than the key file holds is corrupt."""
    first, k = int(ev["first_entry"]), len(ev["entries"])
    if first + k > len(keys):
        raise CorruptMemory(f"{keys_path} has {len(keys)} key rows; the log needs {first + k}")
    return np.array(keys[first : first + k], dtype=np.float32)
