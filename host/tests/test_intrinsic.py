"""Intrinsic rewards: the vectorised novelty store against a one-state-at-a-time loop."""

from __future__ import annotations

import json

import numpy as np
import pytest

from empo2.algo.intrinsic import (
    INTRINSIC_REWARDS,
    NoveltyReward,
    make_intrinsic_reward,
    reference_intrinsic,
)

DIM = 16


class LoopNovelty:
    """Readable reference: a list of [vector, visits]; every cosine computed one pair at a time."""

    def __init__(self, threshold: float) -> None:
        self.threshold = threshold
        self.states: dict[str, list[list]] = {}

    def reward(self, key: str, vector: np.ndarray) -> float:
        vector = vector / np.linalg.norm(vector)
        stored = self.states.setdefault(key, [])
        best, best_sim = None, -np.inf
        for entry in stored:
            sim = float(sum(float(a) * float(b) for a, b in zip(entry[0], vector)))
            if sim > best_sim:
                best, best_sim = entry, sim
        if best is not None and best_sim >= self.threshold:
            best[1] += 1
            return 1.0 / best[1]
        stored.append([vector, 1])
        return 1.0


def unit(v: np.ndarray) -> np.ndarray:
    return (v / np.linalg.norm(v, axis=-1, keepdims=True)).astype(np.float32)


def clustered_states(rng: np.random.Generator, n: int, centers: np.ndarray) -> np.ndarray:
    """States near a few centres (cosine ≈ 0.99) so revisits happen, far from the threshold."""
    picks = rng.integers(0, len(centers), size=n)
    return unit(centers[picks] + 0.02 * rng.standard_normal((n, DIM)))


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_novelty_matches_loop(seed):
    rng = np.random.default_rng(seed)
    centers = unit(rng.standard_normal((12, DIM)))
    fast, slow = NoveltyReward(threshold=0.9), LoopNovelty(threshold=0.9)
    for batch_size in [1, 5, 17, 0, 40, 3, 100]:  # enough states to force the store to grow
        key = ["task/0", "task/1"][int(rng.integers(0, 2))]
        states = clustered_states(rng, batch_size, centers)
        got = fast.rewards(key, states)
        want = np.array([slow.reward(key, s) for s in states], dtype=np.float64)
        np.testing.assert_allclose(got, want)
    assert any(r < 1.0 for r in got), "revisits should occur"
    assert fast.num_states("task/0") == len(slow.states.get("task/0", []))


def test_brand_new_state_then_revisits():
    reward = NoveltyReward()
    state = unit(np.ones((1, DIM)))
    assert reward.rewards("k", state).tolist() == [1.0]
    assert reward.rewards("k", state).tolist() == [0.5]
    assert reward.rewards("k", np.repeat(state, 2, axis=0)).tolist() == [1 / 3, 1 / 4]
    assert reward.num_states("k") == 1


def test_same_batch_sees_states_added_earlier_in_it():
    reward = NoveltyReward()
    a, b = unit(np.eye(DIM)[:2])
    out = reward.rewards("k", np.stack([a, b, a, a, b]))
    np.testing.assert_allclose(out, [1.0, 1.0, 0.5, 1 / 3, 0.5])


def test_below_threshold_states_are_separate_and_keys_do_not_mix():
    reward = NoveltyReward(threshold=0.9)
    a = np.zeros(DIM, dtype=np.float32)
    a[0] = 1.0
    b = unit(np.array([1.0, 0.6] + [0.0] * (DIM - 2)))  # cos(a, b) ≈ 0.857 < 0.9
    c = unit(np.array([1.0, 0.3] + [0.0] * (DIM - 2)))  # cos(a, c) ≈ 0.958 ≥ 0.9
    assert reward.rewards("k", np.stack([a, b])).tolist() == [1.0, 1.0]
    assert reward.rewards("k", c[None]).tolist() == [0.5]  # matched its most similar state, a
    assert reward.rewards("other", a[None]).tolist() == [1.0]
    assert reward.num_states("k") == 2


def test_unnormalised_input_is_normalised():
    reward = NoveltyReward()
    assert reward.rewards("k", np.full((2, DIM), 7.0)).tolist() == [1.0, 0.5]


def test_bad_embeddings_are_clear_errors():
    reward = NoveltyReward()
    with pytest.raises(ValueError, match="non-zero"):
        reward.rewards("k", np.zeros((1, DIM)))
    reward.rewards("k", np.ones((1, DIM)))
    with pytest.raises(ValueError, match="Embedding size"):
        reward.rewards("k", np.ones((1, DIM + 1)))
    with pytest.raises(ValueError, match="needs state embeddings"):
        reward.rewards("k")


@pytest.mark.parametrize("through_json", [False, True])
def test_state_dict_round_trip_reproduces_future_rewards_exactly(through_json):
    rng = np.random.default_rng(7)
    centers = unit(rng.standard_normal((20, DIM)))
    history = [clustered_states(rng, 30, centers) for _ in range(4)]
    future = [clustered_states(rng, 25, unit(rng.standard_normal((20, DIM)) + centers)) for _ in range(4)]

    original = NoveltyReward(threshold=0.95)
    for states in history:
        original.rewards("k", states)
    state = original.state_dict()
    if through_json:
        state = json.loads(json.dumps(state, default=lambda a: a.tolist()))

    resumed = NoveltyReward()
    resumed.load_state_dict(state)
    assert resumed.threshold == 0.95
    for states in future:
        assert np.array_equal(original.rewards("k", states), resumed.rewards("k", states))
        assert np.array_equal(original.rewards("new-key", states), resumed.rewards("new-key", states))


def test_state_dict_is_a_snapshot():
    reward = NoveltyReward()
    reward.rewards("k", unit(np.ones((1, DIM))))
    state = reward.state_dict()
    reward.rewards("k", unit(np.ones((1, DIM))))
    assert state["stores"]["k"]["counts"].tolist() == [1]


def test_reference_intrinsic_is_one_over_retrieved_plus_one():
    np.testing.assert_allclose(reference_intrinsic(np.array([0, 1, 3, 9])), [1.0, 0.5, 0.25, 0.1])
    with pytest.raises(ValueError):
        reference_intrinsic(np.array([-1]))


def test_registry_variants_share_one_call():
    assert set(INTRINSIC_REWARDS) == {"paper", "reference", "off"}
    states = unit(np.ones((3, DIM)))
    retrieved = np.array([0, 2, 4])
    paper = make_intrinsic_reward("paper", threshold=0.8)
    reference = make_intrinsic_reward("reference")
    off = make_intrinsic_reward("off")
    np.testing.assert_allclose(paper.rewards("k", embeddings=states, n_retrieved=retrieved), [1, 1 / 2, 1 / 3])
    np.testing.assert_allclose(reference.rewards("k", embeddings=states, n_retrieved=retrieved), [1, 1 / 3, 1 / 5])
    np.testing.assert_allclose(reference.rewards("k", embeddings=states), [0, 0, 0])  # memory-free
    np.testing.assert_allclose(off.rewards("k", n_retrieved=retrieved), [0, 0, 0])
    assert paper.needs_embeddings and not reference.needs_embeddings and not off.needs_embeddings
    for variant in (reference, off):
        variant.load_state_dict(variant.state_dict())
    with pytest.raises(ValueError, match="expected"):
        reference.load_state_dict(paper.state_dict())
    with pytest.raises(ValueError, match="choose one of"):
        make_intrinsic_reward("rnd")


def _episodes_of_states(groups: list[list[list[str]]]):
    """Episodes of one task variation whose step t reaches the state groups[g][e][t]."""
    from empo2.training.rollout import Episode, StepRecord

    episodes, after = [], []
    for g, group in enumerate(groups):
        for states in group:
            ep = Episode(id=f"e{len(episodes)}", task="power-device", variation=0, group=g, rollout_mode="memory-free")
            ep.steps = [
                StepRecord(
                    observation="",
                    user_text="",
                    tips=[],
                    tip_ids=[],
                    prompt_ids=[],
                    prompt_ids_no_tips=[],
                    action="look around",
                    executed_action="look around",
                    action_ids=[1],
                    behaviour_logprobs=[-1.0],
                )
                for _ in states
            ]
            episodes.append(ep)
            after.append(list(states))
    return episodes, after


class OneHotEmbedder:
    """Test double for the sentence embedder: one orthogonal direction per distinct text, so
    "the same state" is exact and the property below does not hinge on MiniLM's geometry."""

    def __init__(self):
        self.index: dict[str, int] = {}

    def encode(self, texts):
        rows = np.zeros((len(texts), 64), dtype=np.float32)
        for r, text in enumerate(texts):
            rows[r, self.index.setdefault(text, len(self.index))] = 1.0
        return rows


@pytest.mark.parametrize("seed", range(8))
def test_permuting_a_groups_episodes_permutes_their_rewards_and_nothing_else(seed):
    """A fixed defect: scored one episode after another, the first episode of a group earned
    1.0 for a state and the others ½, ⅓, … for the same state; group normalisation made that an
    advantage for being first. Scored jointly, the rewards follow the episodes."""
    from empo2.training.rollout import add_intrinsic_rewards

    rng = np.random.default_rng(seed)
    rooms = [f"you are in the room {k}" for k in range(6)]
    history = [
        [[rooms[int(r)] for r in rng.integers(0, 6, size=int(rng.integers(1, 7)))] for _ in range(2)]
    ]  # an earlier iteration fills the archive
    group = [[rooms[int(r)] for r in rng.integers(0, 6, size=int(rng.integers(1, 7)))] for _ in range(6)]

    def scored(order):
        reward, embedder = NoveltyReward(threshold=0.9), OneHotEmbedder()
        for text in rooms:  # the same direction per text in both runs
            embedder.encode([text])
        episodes, after = _episodes_of_states(history)
        add_intrinsic_rewards(episodes, after, reward, embedder)
        episodes, after = _episodes_of_states([[group[i] for i in order]])
        add_intrinsic_rewards(episodes, after, reward, embedder)
        return [[s.intrinsic for s in ep.steps] for ep in episodes], reward.state_dict()

    base, base_state = scored(list(range(len(group))))
    order = list(rng.permutation(len(group)))
    permuted, permuted_state = scored(order)
    assert permuted == [base[i] for i in order]
    for key, store in base_state["stores"].items():
        np.testing.assert_array_equal(permuted_state["stores"][key]["vectors"], store["vectors"])
        np.testing.assert_array_equal(permuted_state["stores"][key]["counts"], store["counts"])


def test_a_state_reached_by_every_episode_at_once_pays_them_all_alike():
    """Eight episodes reach the same new state at step 0: joint count 8, each earns ⅛; a state
    revisited later in one episode counts the visits before it (1, then ½ along the episode)."""
    from empo2.training.rollout import add_intrinsic_rewards

    episodes, after = _episodes_of_states([[["hallway"]] * 8])
    add_intrinsic_rewards(episodes, after, NoveltyReward(threshold=0.9), OneHotEmbedder())
    assert [ep.steps[0].intrinsic for ep in episodes] == [1 / 8] * 8

    episodes, after = _episodes_of_states([[["hallway", "kitchen", "hallway"]]])
    add_intrinsic_rewards(episodes, after, NoveltyReward(threshold=0.9), OneHotEmbedder())
    assert [s.intrinsic for s in episodes[0].steps] == [1.0, 1.0, 0.5]


def test_num_states_counts_the_distinct_states_of_a_key():
    reward = NoveltyReward(threshold=0.99)
    assert reward.num_states("k") == 0  # an unseen key
    reward.rewards("k", unit(np.eye(DIM)[:3]))
    assert reward.num_states("k") == 3 and reward.num_states("other") == 0


def test_a_resumed_store_larger_than_the_first_allocation_is_restored_whole():
    """More distinct states than the store's initial 64 rows: the resumed store holds them all
    and pays them as the original does."""
    rng = np.random.default_rng(3)
    states = unit(rng.standard_normal((100, DIM)))  # random directions: pairwise cosine < 0.99
    original = NoveltyReward(threshold=0.99)
    original.rewards("k", states)
    assert original.num_states("k") == 100
    resumed = NoveltyReward()
    resumed.load_state_dict(json.loads(json.dumps(original.state_dict(), default=lambda a: a.tolist())))
    assert resumed.num_states("k") == 100
    assert resumed.rewards("k", states).tolist() == original.rewards("k", states).tolist() == [0.5] * 100


def test_the_zero_paying_variants_take_the_batch_length_from_any_argument():
    """'reference' in a memory-free rollout and 'off' pay one 0 per state, whichever of steps,
    embeddings or retrieval counts the caller passed."""
    reference, off = make_intrinsic_reward("reference"), make_intrinsic_reward("off")
    three = {"embeddings": unit(np.ones((3, DIM))), "steps": np.arange(3), "n_retrieved": np.array([0, 1, 2])}
    for name in ("embeddings", "steps"):
        assert reference.rewards("k", **{name: three[name]}).tolist() == [0.0, 0.0, 0.0]
    for name, value in three.items():
        assert off.rewards("k", **{name: value}).tolist() == [0.0, 0.0, 0.0]
    for variant in (reference, off):
        with pytest.raises(ValueError) as error:
            variant.rewards("k")
        assert str(error.value) == "Pass steps, embeddings or n_retrieved so the batch length is known."


def test_bad_retrieval_counts_and_checkpoints_get_one_clear_sentence():
    with pytest.raises(ValueError) as error:
        reference_intrinsic(np.array([2, -1]))
    assert str(error.value) == "Retrieval counts cannot be negative."
    with pytest.raises(ValueError) as error:
        make_intrinsic_reward("reference").load_state_dict(NoveltyReward().state_dict())
    assert str(error.value) == ("Checkpoint holds intrinsic-reward state 'paper' v1, expected 'reference' v1.")
    with pytest.raises(ValueError) as error:
        make_intrinsic_reward("off").load_state_dict({"variant": "off", "version": 99})
    assert str(error.value) == "Checkpoint holds intrinsic-reward state 'off' v99, expected 'off' v1."


def test_the_threshold_is_a_cosine_in_minus_one_to_one_inclusive():
    for threshold in (-1.0, 1.0):
        assert NoveltyReward(threshold=threshold).threshold == threshold
    for threshold in (-1.5, 1.5):
        with pytest.raises(ValueError) as error:
            NoveltyReward(threshold=threshold)
        assert str(error.value) == f"Novelty threshold is a cosine similarity in [-1, 1], got {threshold}."


def test_bad_novelty_calls_get_one_clear_sentence():
    reward = NoveltyReward()
    with pytest.raises(ValueError) as error:
        reward.rewards("k")
    assert str(error.value) == "The 'paper' intrinsic reward needs state embeddings."
    with pytest.raises(ValueError) as error:
        reward.rewards("k", unit(np.ones((3, DIM))), steps=np.arange(2))
    assert str(error.value) == "Pass one step per state: (2,) steps for 3 states."


def test_the_checkpointed_store_is_float32_vectors_and_int64_counts():
    """The size decision 5 states (about 1.5 KB per state at 384 dims) and what a resumed run
    computes with."""
    reward = NoveltyReward()
    reward.rewards("k", unit(np.eye(DIM)[:2]))
    saved = reward.state_dict()["stores"]["k"]
    assert saved["vectors"].dtype == np.float32 and saved["counts"].dtype == np.int64


def test_similar_is_inclusive_at_the_threshold():
    """Decision 2: a cosine equal to the threshold is "similar", within a batch and against the
    store (identical unit rows have cosine exactly 1.0)."""
    reward = NoveltyReward(threshold=1.0)
    state = np.eye(DIM)[:1]
    assert reward.rewards("k", np.repeat(state, 2, axis=0)).tolist() == [1.0, 0.5]
    assert reward.rewards("k", state).tolist() == [1 / 3]
    # every state is similar to itself (cosine 1 ≥ 1), so two different ones stay apart
    assert reward.rewards("other", np.eye(DIM)[:2]).tolist() == [1.0, 1.0]


def test_rows_of_any_length_are_one_direction():
    reward = NoveltyReward()
    direction = unit(np.arange(1.0, DIM + 1))
    assert reward.rewards("k", np.stack([3.0 * direction, 0.1 * direction])).tolist() == [1.0, 0.5]


def _tie_members(base: np.ndarray, offset: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """a, b similar to each other (cosine 0.92 at threshold 0.9), c similar to a (0.94) and not
    to b (0.74): which of a and b is stored decides c's reward."""
    a, b, c = (unit(base + k * offset) for k in (0.2, -0.2, 0.6))
    return a, b, c


@pytest.mark.parametrize(
    "base,offset,c_reward",
    [
        (np.eye(DIM)[0], np.eye(DIM)[1], 1.0),  # a, b differ in column 1: b is smaller
        (np.eye(DIM)[0], np.eye(DIM)[DIM - 1], 1.0),  # ... only in the last column: b is smaller
        (np.eye(DIM)[2], (np.eye(DIM)[1] - np.eye(DIM)[0]) / np.sqrt(2), 1 / 3),  # column 0 decides: a
    ],
    ids=["column-1", "last-column", "column-0-first"],
)
def test_a_new_group_found_at_one_step_is_stored_as_its_smallest_vector(base, offset, c_reward):
    """Decision 3: two similar new states reached at the same step are stored as the
    lexicographically smallest vector (columns in order), whatever their order in the batch, so
    a later state near only one of them is paid the same either way."""
    a, b, c = _tie_members(base, offset)
    for batch in (np.stack([a, b]), np.stack([b, a])):
        reward = NoveltyReward(threshold=0.9)
        assert reward.rewards("k", batch, steps=np.array([0, 0])).tolist() == [0.5, 0.5]
        assert reward.num_states("k") == 1
        assert reward.rewards("k", c[None, :], steps=np.array([0])).tolist() == [pytest.approx(c_reward)]


def test_bad_embedding_shapes_and_values_get_one_clear_sentence():
    reward = NoveltyReward()
    with pytest.raises(ValueError) as error:
        reward.rewards("k", np.ones(DIM))
    assert str(error.value) == f"Embeddings must be (n, d), got shape ({DIM},)."
    for bad in (np.zeros((1, DIM)), np.full((1, DIM), np.nan)):
        with pytest.raises(ValueError) as error:
            reward.rewards("k", bad)
        assert str(error.value) == "Embeddings must be finite, non-zero rows."
