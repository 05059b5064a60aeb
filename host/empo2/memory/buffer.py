"""One task variation's entries: keys in a preallocated float32 matrix, and the ranking rule.

docs/paper.md §4: entry = (key text, action, tip); key = sentence embedding of the step's text;
capacity counts entries, oldest evicted first; exact duplicates dropped; retrieval keeps
cosine > threshold and ranks by the stored episode score, not by similarity.

Rows are kept in insertion order (row 0 is the oldest), so FIFO eviction is a shift of the first
rows and "newer" is simply "higher row". Deleting a tip compacts its rows away (a person's delete
frees capacity at once; see store.py). Both are one memmove of at most capacity x dim floats,
cheap next to an embedding call.
"""

from __future__ import annotations

from collections import Counter

import numpy as np

from empo2.algo.cosine import cosine

Triple = tuple[str, str, str]  # (key text, action, tip text): what makes two entries duplicates


def rank(similarity: np.ndarray, scores: np.ndarray, threshold: float, top_k: int) -> list[np.ndarray]:
    """Rows retrieved for each query, best first.

    similarity (m, n): cosine of query i to row j. scores (n,): stored episode score per row.
    Keeps rows with similarity > threshold (strict), orders them by score descending, then
    similarity descending, then newer (higher row) first, and cuts to top_k.
    Returns m int arrays of row indices, each of length <= top_k.
    """
    out = []
    for sims in similarity:
        rows = np.flatnonzero(sims > threshold)
        if rows.size:
            # lexsort's last key is the primary one; negate for descending order.
            order = np.lexsort((-rows, -sims[rows], -scores[rows]))
            rows = rows[order[:top_k]]
        out.append(rows)
    return out


class VariationBuffer:
    """Entries of one variation, at most `capacity`, oldest first.

    Per row: keys (capacity, dim) float32, tip (capacity,) int64 (the store's internal tip
    index), entry (capacity,) int64 (global entry number = row in keys.f32), scores (capacity,)
    float64, plus key_texts and actions as lists. Only rows [0, n) are valid.
    """

    def __init__(self, capacity: int, dim: int):
        self.capacity = capacity
        self.keys = np.zeros((capacity, dim), dtype=np.float32)
        self.tip = np.zeros(capacity, dtype=np.int64)
        self.entry = np.zeros(capacity, dtype=np.int64)
        self.scores = np.zeros(capacity, dtype=np.float64)
        self.key_texts: list[str] = []
        self.actions: list[str] = []
        self.n = 0
        self._tip_text: dict[int, str] = {}  # tip index -> its current text, for live tips here
        self._owners: dict[Triple, list[int]] = {}  # live triple -> tip indices holding it

    # --- duplicates ----------------------------------------------------------------------

    def owner(self, key_text: str, action: str, tip_text: str) -> int | None:
        """The tip holding a live entry identical to this one, or None."""
        owners = self._owners.get((key_text, action, tip_text))
        return owners[0] if owners else None

    def tip_with_text(self, tip_text: str) -> int | None:
        """The first-stored live tip here whose current text is exactly this one, or None."""
        return next((tip for tip, text in self._tip_text.items() if text == tip_text), None)

    def _own(self, triple: Triple, tip: int) -> None:
        self._owners.setdefault(triple, []).append(tip)

    def _disown(self, triple: Triple, tip: int) -> None:
        owners = self._owners[triple]
        owners.remove(tip)
        if not owners:
            del self._owners[triple]

    # --- changes -------------------------------------------------------------------------

    def evicted_by(self, k: int) -> Counter[int]:
        """How many rows of each existing tip appending k rows would evict (no change made)."""
        e = min(self.n, max(0, self.n + k - self.capacity))
        return Counter(self.tip[:e].tolist())

    def append(
        self,
        keys: np.ndarray,
        key_texts: list[str],
        actions: list[str],
        tip: int,
        tip_text: str,
        score: float,
        first_entry: int,
    ) -> Counter[int]:
        """Add k rows of one tip (keys (k, dim)); evict the oldest rows beyond capacity.

        Returns how many rows of each tip were evicted (the new tip's own rows included when
        one tip brings more than `capacity` entries: only its last `capacity` stay).
        """
        k = len(keys)
        entries = np.arange(first_entry, first_entry + k, dtype=np.int64)
        evicted: Counter[int] = Counter()
        if k > self.capacity:  # keep the newest `capacity` of the tip's own entries
            evicted[tip] += k - self.capacity
            drop = k - self.capacity
            keys, entries = keys[drop:], entries[drop:]
            key_texts, actions = key_texts[drop:], actions[drop:]
            k = self.capacity
        e = max(0, self.n + k - self.capacity)
        if e:
            evicted.update(self._evict_oldest(e))
        self._tip_text[tip] = tip_text
        rows = slice(self.n, self.n + k)
        self.keys[rows] = keys
        self.tip[rows] = tip
        self.entry[rows] = entries
        self.scores[rows] = score
        self.key_texts.extend(key_texts)
        self.actions.extend(actions)
        for kt, a in zip(key_texts, actions):
            self._own((kt, a, tip_text), tip)
        self.n += k
        return evicted

    def _evict_oldest(self, e: int) -> Counter[int]:
        gone = self.tip[:e].tolist()
        for t, kt, a in zip(gone, self.key_texts[:e], self.actions[:e]):
            self._disown((kt, a, self._tip_text[t]), t)
        remaining = self.n - e
        # Overlapping slice assignment is safe in numpy (it buffers when memory overlaps).
        for arr in (self.keys, self.tip, self.entry, self.scores):
            arr[:remaining] = arr[e : self.n]
        del self.key_texts[:e], self.actions[:e]
        self.n = remaining
        counts = Counter(gone)
        live = set(self.tip[: self.n].tolist())
        for t in counts:
            if t not in live:
                del self._tip_text[t]
        return counts

    def remove_tip(self, tip: int) -> int:
        """Drop every row of `tip` (a deleted tip); returns how many rows went."""
        keep = self.tip[: self.n] != tip
        removed = int(self.n - keep.sum())
        if not removed:
            return 0
        text = self._tip_text.pop(tip)
        idx = np.flatnonzero(~keep)
        for i in idx:
            self._disown((self.key_texts[i], self.actions[i], text), tip)
        m = self.n - removed
        for arr in (self.keys, self.tip, self.entry, self.scores):
            arr[:m] = arr[: self.n][keep]
        self.key_texts = [t for t, k in zip(self.key_texts, keep) if k]
        self.actions = [a for a, k in zip(self.actions, keep) if k]
        self.n = m
        return removed

    def retext(self, tip: int, text: str) -> None:
        """A tip's text changed: re-key its duplicate triples. Keys and rows do not change."""
        old = self._tip_text.get(tip)
        if old is None or old == text:
            return
        for i in np.flatnonzero(self.tip[: self.n] == tip):
            self._disown((self.key_texts[i], self.actions[i], old), tip)
            self._own((self.key_texts[i], self.actions[i], text), tip)
        self._tip_text[tip] = text

    # --- retrieval -----------------------------------------------------------------------

    def similarities(self, queries: np.ndarray) -> np.ndarray:
        """Cosine of each query to each row: queries (m, dim) -> (m, n).

        Keys and queries are L2-normalised. The product is the batch-invariant one (algo/cosine.py):
        a query's row has the same bits alone or in any batch, so a rerun, a replay or a resume
        retrieves exactly what the run did.
        """
        return cosine(queries, self.keys[: self.n])
