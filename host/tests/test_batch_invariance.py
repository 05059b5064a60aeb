"""Decisions that must not depend on the batch a number was computed in (docs/algorithm.md,
"Which numbers are bit-exact").

Retrieval and the novelty reward turn a cosine into a yes or no (cosine > 0.5, cosine ≥ 0.9) and
rank by it; a resume, a rerun and a replay promise the same tips. So a query's similarities, the
entries it gets and their order must have the same bits alone, in any batch and in any order of
the batch. A float32 ``Q @ K.T`` does not give that (BLAS picks a kernel by the batch's shape);
these property tests draw random stores and random batch compositions and fail on it.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from empo2.algo.cosine import cosine
from empo2.algo.intrinsic import NoveltyReward, _unit_rows
from empo2.memory.buffer import VariationBuffer, rank

DIM = 384  # MiniLM's width: the BLAS paths the product takes at the real size


def unit_rows(rng: np.random.Generator, n: int, dim: int = DIM) -> np.ndarray:
    rows = rng.standard_normal((n, dim)).astype(np.float32)
    return (rows / np.linalg.norm(rows, axis=1, keepdims=True)).astype(np.float32)


def near(rng: np.random.Generator, rows: np.ndarray, noise: float) -> np.ndarray:
    """Rows close to `rows` (cosines near the thresholds, where a last bit decides)."""
    moved = rows + noise * rng.standard_normal(rows.shape).astype(np.float32)
    return (moved / np.linalg.norm(moved, axis=1, keepdims=True)).astype(np.float32)


def filled_buffer(rng: np.random.Generator, n: int) -> VariationBuffer:
    buf = VariationBuffer(capacity=max(n, 1), dim=DIM)
    keys = unit_rows(rng, n)
    for i in range(n):  # scores with ties, so the similarity order matters in the ranking
        buf.append(
            keys[i : i + 1],
            [f"key {i}"],
            [f"act {i}"],
            tip=i,
            tip_text=f"tip {i}",
            score=float(rng.integers(0, 3) * 50),
            first_entry=i,
        )
    return buf


stores_and_batches = st.tuples(
    st.integers(0, 2**32 - 1),  # seed of the store's keys and the queries
    st.integers(1, 60),  # entries in the store
    st.integers(2, 12),  # queries in the batch
)


@settings(max_examples=60, deadline=None)
@given(stores_and_batches, st.randoms(use_true_random=False))
def test_a_querys_similarities_and_retrieval_are_bit_identical_alone_and_in_any_batch(drawn, order):
    seed, n_entries, n_queries = drawn
    rng = np.random.default_rng(seed)
    buf = filled_buffer(rng, n_entries)
    stored = buf.keys[: buf.n]
    # Half the queries sit close to a stored key, half anywhere: cosines on both sides of 0.5.
    picks = rng.integers(0, n_entries, n_queries)
    queries = np.where(
        np.arange(n_queries)[:, None] % 2 == 0, near(rng, stored[picks], 0.03), unit_rows(rng, n_queries)
    )
    queries = queries.astype(np.float32)
    together = buf.similarities(queries)
    shuffled = list(range(n_queries))
    order.shuffle(shuffled)
    reordered = buf.similarities(queries[shuffled])
    for i in range(n_queries):
        alone = buf.similarities(queries[i : i + 1])
        assert alone.tobytes() == together[i : i + 1].tobytes()
        assert reordered[shuffled.index(i)].tobytes() == together[i].tobytes()
        # The threshold at the value itself: strict, so the entry goes, in any company.
        best = int(np.argmax(together[i]))
        edge = float(together[i, best])
        [rows_alone] = rank(alone, buf.scores[: buf.n], edge, 10)
        [rows_together] = rank(together[i : i + 1], buf.scores[: buf.n], edge, 10)
        assert best not in rows_alone.tolist()
        assert rows_alone.tolist() == rows_together.tolist()
    retrieved = rank(together, buf.scores[: buf.n], 0.5, 10)
    for i in range(n_queries):
        [alone] = rank(buf.similarities(queries[i : i + 1]), buf.scores[: buf.n], 0.5, 10)
        assert alone.tolist() == retrieved[i].tolist()


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1, 40), st.integers(1, 40))
def test_cosine_rows_do_not_depend_on_the_other_rows_or_the_key_count(seed, m, n):
    rng = np.random.default_rng(seed)
    queries, keys = unit_rows(rng, m), unit_rows(rng, n)
    full = cosine(queries, keys)
    assert full.shape == (m, n) and full.dtype == np.float64
    for i in range(m):
        assert cosine(queries[i : i + 1], keys).tobytes() == full[i : i + 1].tobytes()
    # A key scored in a smaller store has the same cosine to every query.
    j = int(rng.integers(0, n))
    assert cosine(queries, keys[j : j + 1]).tobytes() == full[:, j : j + 1].copy().tobytes()
    # And it is the cosine, to well under any threshold's meaning.
    exact = queries.astype(np.float64) @ keys.astype(np.float64).T
    assert np.max(np.abs(full - exact)) < 5e-6


def test_the_cosine_is_symmetric_and_a_unit_row_scores_one_with_itself():
    rng = np.random.default_rng(0)
    a, b = unit_rows(rng, 5), unit_rows(rng, 7)
    assert cosine(a, b).tobytes() == cosine(b, a).T.copy().tobytes()
    assert np.allclose(np.diag(cosine(a, a)), 1.0, atol=5e-6)


@pytest.mark.parametrize(
    "queries, keys, says",
    [
        (np.ones((2, 4)), np.eye(4)[:1], "cosine takes L2-normalised rows; a row is longer than 1.5"),
        (np.eye(4)[:1], [[1.6, 0.0, 0.0, 0.0]], "cosine takes L2-normalised rows; a row is longer than 1.5"),
        (np.ones(4), np.eye(4)[:1], "cosine takes (rows, dim) arrays, got shape (4,)"),
        (np.eye(3)[:1], np.eye(4)[:2], "queries have 3 dimensions, keys 4"),
    ],
)
def test_the_cosine_refuses_what_it_cannot_make_exact_in_one_sentence(queries, keys, says):
    """Rows much longer than unit could push a partial sum past 2**53, where sums stop being exact."""
    with pytest.raises(ValueError) as refused:
        cosine(np.asarray(queries), np.asarray(keys))
    assert str(refused.value) == says


def test_rows_up_to_the_bound_are_taken():
    edge = np.array([[1.5, 0.0]])  # norm 1.5 exactly: the bound itself is allowed
    assert cosine(edge, edge)[0, 0] == 2.25


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1, 30), st.integers(1, 10))
def test_the_novelty_rewards_match_of_a_state_does_not_depend_on_its_batch_mates(seed, stored, mates):
    """A state's nearest stored state and its ≥ threshold decision, alone or beside other states
    (mates far from everything stored, each alone in its step, so only the product could differ)."""
    rng = np.random.default_rng(seed)
    past = unit_rows(rng, stored)
    state = near(rng, past[[int(rng.integers(0, stored))]], 0.01)

    def reward_after(batch: np.ndarray, steps: np.ndarray) -> tuple[np.ndarray, int]:
        # The edge itself, on the rows as the reward normalises them.
        edge = float(cosine(_unit_rows(state), _unit_rows(past)).max())
        novelty = NoveltyReward(threshold=edge)
        novelty.rewards("v", past, steps=np.arange(stored))
        return novelty.rewards("v", batch, steps=steps), novelty.num_states("v")

    alone, _ = reward_after(state, np.array([stored]))
    others = -unit_rows(rng, mates)  # fresh directions: new states of their own
    together, _ = reward_after(np.concatenate([others, state]), np.arange(mates + 1) + stored + 1)
    assert alone[0] == together[-1] == 0.5  # a second visit of the matched state, in both
