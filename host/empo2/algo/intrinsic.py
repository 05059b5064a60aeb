"""Intrinsic (exploration) rewards for EMPO² (arXiv 2602.23008, docs/paper.md §3).

The paper keeps, per task variation, a list of distinct states; a state whose cosine similarity to
every stored state is below a threshold is new and is added; r_int = 1/n, "n counts similar past
states". The reference code instead pays 1/(number of retrieved tips + 1), only in memory modes.
Variants are looked up by name in ``INTRINSIC_REWARDS`` and share one call:

    reward = make_intrinsic_reward("paper", threshold=0.9)
    r_int = reward.rewards(key, embeddings=E, n_retrieved=counts)   # (n,) float64
    # the caller multiplies by its coefficient (paper 1×; ablations 0.5×, 2×)

Embeddings come from the caller (the trainer owns the sentence embedder); this module never loads
a model. ``needs_embeddings`` tells the trainer whether to compute them at all.

Decisions and deviations, numbered:

1. Exact paper rule as implemented: each stored distinct state carries a visit count. A state
   whose best cosine to the stored states is ≥ threshold is a visit of the MOST similar stored
   state (ties to the earliest); r_int = 1/n with n that state's visits up to and including
   this one (1.0 for a brand-new state, ½, ⅓, … later; never a division by zero).
2. The threshold is not given in the paper; default 0.9 (cosine, inclusive: ≥ is "similar").
3. A call scores a whole batch (an iteration's states of one variation) jointly, against the
   store as it stood before the call: states that match no stored state are grouped among
   themselves (connected components of the ≥ threshold graph, which no ordering changes), and a
   state reached at step t of its episode counts every visit of its group in the batch at steps
   ≤ t, by any episode. So the episodes of a GRPO group that reach a state at the same step earn
   the same reward whatever their place in the batch (scored one after another, the first earned
   1.0 and the eighth ⅛, and group normalisation made that an advantage), and a state revisited
   along one episode still earns 1, then ½. Without ``steps`` the rows are consecutive steps of
   one sequence, which is the one-state-at-a-time rule. A new group is stored as its member of
   the earliest step (ties: the smallest vector, again independent of order).
4. Rows are re-normalised to unit length (float32) on entry, so a caller that forgets is safe;
   an all-zero row is rejected.
5. The store grows without bound (capacity doubles as needed); about 1.5 KB per distinct state at
   384 dims.
6. The reference variant ("reference") pays 1/(n_retrieved + 1) and 0 when no retrieval happened
   (memory-free rollouts); its final version also leaves the reward out of the advantage — that
   choice belongs to the trainer. "off" pays 0 everywhere (the "no intrinsic reward" ablation).
7. ``state_dict()`` holds plain numpy arrays and JSON types; ``load_state_dict`` restores it
   exactly, so a resumed run scores future states bit for bit as the uninterrupted one.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

import numpy as np

from empo2.algo.cosine import cosine

STATE_VERSION = 1


class IntrinsicReward(Protocol):
    """What the trainer calls; every variant in ``INTRINSIC_REWARDS`` satisfies it."""

    needs_embeddings: bool

    def rewards(
        self,
        key: str,
        embeddings: np.ndarray | None = None,
        n_retrieved: np.ndarray | None = None,
        steps: np.ndarray | None = None,
    ) -> np.ndarray: ...

    def state_dict(self) -> dict[str, Any]: ...

    def load_state_dict(self, state: dict[str, Any]) -> None: ...


INTRINSIC_REWARDS: dict[str, Callable[..., IntrinsicReward]] = {}


def register_intrinsic(name: str) -> Callable[[type], type]:
    def wrap(cls: type) -> type:
        INTRINSIC_REWARDS[name] = cls
        return cls

    return wrap


def make_intrinsic_reward(name: str, **kwargs: Any) -> IntrinsicReward:
    """Build the variant registered under ``name`` ("paper", "reference" or "off")."""
    if name not in INTRINSIC_REWARDS:
        raise ValueError(f"Unknown intrinsic reward {name!r}; choose one of {sorted(INTRINSIC_REWARDS)}.")
    return INTRINSIC_REWARDS[name](**kwargs)


# ---------------------------------------------------------------------------------------------
# Paper: distinct-state novelty


class _StateStore:
    """Distinct states of one key: a preallocated (capacity, d) float32 matrix and visit counts."""

    def __init__(self, dim: int, capacity: int = 64) -> None:
        self.size = 0
        self.vectors = np.zeros((capacity, dim), dtype=np.float32)
        self.counts = np.zeros(capacity, dtype=np.int64)

    def add(self, vector: np.ndarray) -> int:
        if self.size == len(self.vectors):  # grow by doubling
            self.vectors = np.concatenate([self.vectors, np.zeros_like(self.vectors)])
            self.counts = np.concatenate([self.counts, np.zeros_like(self.counts)])
        index = self.size
        self.vectors[index] = vector
        self.counts[index] = 1
        self.size += 1
        return index


@register_intrinsic("paper")
class NoveltyReward:
    """Paper intrinsic reward: 1/visits of the matched distinct state (1.0 for a new state)."""

    needs_embeddings = True

    def __init__(self, threshold: float = 0.9) -> None:
        if not -1.0 <= threshold <= 1.0:
            raise ValueError(f"Novelty threshold is a cosine similarity in [-1, 1], got {threshold}.")
        self.threshold = float(threshold)
        self._stores: dict[str, _StateStore] = {}

    def num_states(self, key: str) -> int:
        """Distinct states stored for ``key`` (0 for an unseen key)."""
        store = self._stores.get(key)
        return 0 if store is None else store.size

    def rewards(
        self,
        key: str,
        embeddings: np.ndarray | None = None,
        n_retrieved: np.ndarray | None = None,
        steps: np.ndarray | None = None,
    ) -> np.ndarray:
        """Score a batch of states of one task variation jointly, then add it to the store.

        Args:
            key: task variation (e.g. "power-component/3"); stores never mix across keys.
            embeddings: (n, d) state embeddings, one row per state.
            n_retrieved: ignored (shared signature).
            steps: (n,) step of each state within its episode; None: 0, 1, …, n − 1.
        Returns:
            (n,) float64 rewards in (0, 1].
        """
        if embeddings is None:
            raise ValueError("The 'paper' intrinsic reward needs state embeddings.")
        batch = _unit_rows(embeddings)
        n = len(batch)
        when = np.arange(n) if steps is None else np.asarray(steps, dtype=np.int64)
        if when.shape != (n,):
            raise ValueError(f"Pass one step per state: {when.shape} steps for {n} states.")
        store = self._stores.get(key)
        if store is None:
            store = self._stores[key] = _StateStore(batch.shape[1])
        if batch.shape[1] != store.vectors.shape[1]:
            raise ValueError(
                f"Embedding size {batch.shape[1]} differs from the {store.vectors.shape[1]} already stored for {key!r}."
            )
        if n == 0:
            return np.zeros(0, dtype=np.float64)
        old_size = store.size
        # Group of every state: its most similar stored state, else a component of new states.
        group = np.full(n, -1, dtype=np.int64)
        if old_size:
            sims_old = cosine(batch, store.vectors[:old_size])  # (n, old_size), batch-invariant
            best = np.argmax(sims_old, axis=1)  # first maximum: ties to the earliest state
            matched = sims_old[np.arange(n), best] >= self.threshold
            group[matched] = best[matched]
        new_rows = np.flatnonzero(group < 0)
        if new_rows.size:
            components = _components(cosine(batch[new_rows], batch[new_rows]) >= self.threshold)
            # Each new group is stored as its earliest-step member (ties: the smallest vector),
            # and the groups in the order of those members: no episode order shows through.
            by_vector = [batch[new_rows, d] for d in range(batch.shape[1] - 1, -1, -1)]
            ranked = new_rows[np.lexsort(by_vector + [when[new_rows]])]
            firsts = {}
            for row in ranked:
                firsts.setdefault(components[np.searchsorted(new_rows, row)], row)
            for c, first in firsts.items():
                index = store.add(batch[first])
                store.counts[index] = 0  # its visits are the batch's, counted below
                group[new_rows[components == c]] = index
        # n = visits before this batch + the batch's visits of the group at steps ≤ t.
        same = group[:, None] == group[None, :]
        earlier = when[None, :] <= when[:, None]
        visits = store.counts[group] + (same & earlier).sum(axis=1)
        np.add.at(store.counts, group, 1)
        return 1.0 / visits.astype(np.float64)

    def state_dict(self) -> dict[str, Any]:
        return {
            "version": STATE_VERSION,
            "variant": "paper",
            "threshold": self.threshold,
            "stores": {
                key: {
                    "vectors": store.vectors[: store.size].copy(),
                    "counts": store.counts[: store.size].copy(),
                }
                for key, store in self._stores.items()
            },
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        _check_state(state, "paper")
        self.threshold = float(state["threshold"])
        self._stores = {}
        for key, saved in state["stores"].items():
            vectors = np.asarray(saved["vectors"], dtype=np.float32)
            counts = np.asarray(saved["counts"], dtype=np.int64)
            store = _StateStore(vectors.shape[1], capacity=max(64, len(vectors)))
            store.vectors[: len(vectors)] = vectors
            store.counts[: len(counts)] = counts
            store.size = len(vectors)
            self._stores[key] = store


def _components(adjacent: np.ndarray) -> np.ndarray:
    """(m, m) symmetric boolean adjacency → (m,) component labels 0, 1, … in order of first
    member (label propagation to the smallest index: the same partition for any row order)."""
    labels = np.arange(len(adjacent))
    while True:
        spread = np.where(adjacent, labels[None, :], len(labels)).min(axis=1)
        if np.array_equal(spread, labels):
            break
        labels = spread
    _, dense = np.unique(labels, return_inverse=True)
    return dense.reshape(-1)


def _unit_rows(embeddings: np.ndarray) -> np.ndarray:
    """(n, d) → (n, d) float32 rows of unit L2 norm."""
    rows = np.asarray(embeddings, dtype=np.float32)
    if rows.ndim != 2:
        raise ValueError(f"Embeddings must be (n, d), got shape {rows.shape}.")
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    if not np.all(np.isfinite(rows)) or np.any(norms == 0):
        raise ValueError("Embeddings must be finite, non-zero rows.")
    return (rows / norms).astype(np.float32)


# ---------------------------------------------------------------------------------------------
# Reference code: retrieval counts


def reference_intrinsic(n_retrieved: np.ndarray) -> np.ndarray:
    """Reference-code intrinsic reward: 1 / (n_retrieved + 1).

    Args:
        n_retrieved: (n,) int, tips retrieved at each step (≥ 0).
    Returns:
        (n,) float64 in (0, 1]; 1.0 when nothing was retrieved (a state the memory knows nothing
        about).
    """
    counts = np.asarray(n_retrieved)
    if np.any(counts < 0):
        raise ValueError("Retrieval counts cannot be negative.")
    return 1.0 / (counts.astype(np.float64) + 1.0)


@register_intrinsic("reference")
class RetrievalCountReward:
    """Reference variant: stateless, pays ``reference_intrinsic`` in memory modes and 0 otherwise."""

    needs_embeddings = False

    def rewards(
        self,
        key: str,
        embeddings: np.ndarray | None = None,
        n_retrieved: np.ndarray | None = None,
        steps: np.ndarray | None = None,
    ) -> np.ndarray:
        """n_retrieved: (n,) tip counts, or None for a memory-free rollout (→ zeros of len n)."""
        if n_retrieved is None:
            return np.zeros(_batch_length(embeddings, steps), dtype=np.float64)
        return reference_intrinsic(n_retrieved)

    def state_dict(self) -> dict[str, Any]:
        return {"version": STATE_VERSION, "variant": "reference"}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        _check_state(state, "reference")


@register_intrinsic("off")
class NoIntrinsicReward:
    """Ablation "no intrinsic reward": zeros of the batch length."""

    needs_embeddings = False

    def rewards(
        self,
        key: str,
        embeddings: np.ndarray | None = None,
        n_retrieved: np.ndarray | None = None,
        steps: np.ndarray | None = None,
    ) -> np.ndarray:
        return np.zeros(_batch_length(embeddings, n_retrieved, steps), dtype=np.float64)

    def state_dict(self) -> dict[str, Any]:
        return {"version": STATE_VERSION, "variant": "off"}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        _check_state(state, "off")


def _batch_length(*arrays: np.ndarray | None) -> int:
    """The length of the first array given: what a variant that pays zeros needs to know."""
    for array in arrays:
        if array is not None:
            return len(array)
    raise ValueError("Pass steps, embeddings or n_retrieved so the batch length is known.")


def _check_state(state: dict[str, Any], variant: str) -> None:
    if state.get("variant") != variant or state.get("version") != STATE_VERSION:
        raise ValueError(
            f"Checkpoint holds intrinsic-reward state {state.get('variant')!r} "
            f"v{state.get('version')}, expected {variant!r} v{STATE_VERSION}."
        )
