"""An iteration's tips stored as one batch (MemoryStore.add_episode_tips): one embedding call for
all their keys, one append to the log, and the same store as the tips added one by one.

On a busy two-core machine an embedding call and two fsyncs per tip made the tips phase of a
first iteration minutes long; these pin the batch, its all-or-nothing failure, and that the
thread pools of the host are set up before torch loads (cpu_threads.py).
"""

from __future__ import annotations

import json
import os

import pytest

from empo2 import cpu_threads
from empo2.memory import MemoryStore
from empo2.memory.layout import EVENTS_FILE, KEYS_FILE
from empo2.memory.store import EpisodeTip

VK = "power-component/3"
OTHER = "grow-plant/1"


class CountingEmbedder:
    """The real embedder, counting its calls and the texts each call asked for."""

    def __init__(self, inner):
        self.inner, self.dim, self.calls = inner, inner.dim, []

    def encode(self, texts):
        self.calls.append(list(texts))
        return self.inner.encode(texts)


def tips_of_an_iteration() -> list[EpisodeTip]:
    """Four episodes' tips in two variations; the third repeats the first one's text."""
    return [
        EpisodeTip(
            VK,
            "turn the switch on before anything else",
            [("a red bulb, a battery and a switch", "look"), ("the switch is off", "flip switch")],
            20.0,
            {"episode": "e0"},
        ),
        EpisodeTip(
            OTHER,
            "water the seed every turn",
            [("a pot with soil and a seed", "water pot"), ("the seed sprouted", "wait")],
            50.0,
            {"episode": "e1"},
        ),
        EpisodeTip(
            VK,
            "turn the switch on before anything else",
            [("the battery is connected", "connect wire"), ("the bulb is dark", "flip switch")],
            60.0,
            {"episode": "e2"},
        ),
        EpisodeTip(VK, "connect the battery first", [("wires lie on the table", "take wire")], 0.0, {"episode": "e3"}),
    ]


def events(folder) -> list[dict]:
    """The log's events without their times (two stores never write at the same instant)."""
    return [
        {k: v for k, v in json.loads(line).items() if k != "at"}
        for line in (folder / EVENTS_FILE).read_text().splitlines()[1:]
    ]


@pytest.fixture
def fsyncs(monkeypatch):
    """Every fsync the process makes from here on, by file name."""
    synced: list[str] = []
    real = os.fsync

    def counting(fd):
        synced.append(os.path.basename(os.readlink(f"/proc/self/fd/{fd}")))
        return real(fd)

    monkeypatch.setattr(os, "fsync", counting)
    return synced


def test_an_iterations_tips_take_one_embedding_call_and_one_durable_write(tmp_path, embedder, fsyncs):
    counting = CountingEmbedder(embedder)
    with MemoryStore.open(tmp_path / "memory", counting, capacity=20) as store:
        fsyncs.clear()
        counting.calls.clear()
        stored = store.add_episode_tips(tips_of_an_iteration())
        assert len(counting.calls) == 1, "one embedding call for the keys of every tip"
        assert counting.calls[0] == [k for t in tips_of_an_iteration() for k, _ in t.steps]
        assert sorted(fsyncs) == [EVENTS_FILE, KEYS_FILE], "one append: the key rows, then the lines"
    assert [t.id for t in stored] == ["t000001", "t000002", "t000001", "t000003"]


def test_a_batch_stores_what_the_same_tips_added_one_by_one_store(tmp_path, embedder):
    with MemoryStore.open(tmp_path / "one-by-one", embedder, capacity=3) as alone:
        singles = [
            alone.add_episode_tip(t.variation_key, t.text, t.steps, t.score, t.provenance)
            for t in tips_of_an_iteration()
        ]
        expected = [(t.id, t.text, t.score, t.n_entries) for t in alone.list_tips(limit=10, include_evicted=True)[0]]
        entries = {vk: alone.entries(vk) for vk in (VK, OTHER)}
    with MemoryStore.open(tmp_path / "batch", embedder, capacity=3) as batch:
        stored = batch.add_episode_tips(tips_of_an_iteration())
        assert [
            (t.id, t.text, t.score, t.n_entries) for t in batch.list_tips(limit=10, include_evicted=True)[0]
        ] == expected
        assert {vk: batch.entries(vk) for vk in (VK, OTHER)} == entries
    assert [t.id for t in stored] == [t.id for t in singles]
    assert events(tmp_path / "batch") == events(tmp_path / "one-by-one"), "the same log, evictions included"
    with MemoryStore.open(tmp_path / "batch", embedder, capacity=3) as reopened:
        assert [
            (t.id, t.text, t.score, t.n_entries) for t in reopened.list_tips(limit=10, include_evicted=True)[0]
        ] == expected


def test_listeners_hear_of_a_batchs_tips_once_the_log_holds_them(tmp_path, embedder):
    heard = []
    folder = tmp_path / "memory"

    def listener(change):
        logged = {e.get("tip", {}).get("id") or e.get("tip_id") for e in events(folder)}
        heard.append((change["kind"], change["tip"]["id"], change["tip"]["id"] in logged))

    with MemoryStore.open(folder, embedder, capacity=20, on_change=listener) as store:
        store.add_episode_tips(tips_of_an_iteration())
    assert [kind for kind, _, _ in heard] == ["add", "add", "extend", "add"]
    assert all(logged for _, _, logged in heard), heard


def test_a_failed_write_leaves_the_store_and_its_files_as_they_were(tmp_path, embedder):
    folder = tmp_path / "memory"
    with MemoryStore.open(folder, embedder, capacity=20) as store:
        store.add_tip(VK, "a person's advice", None, author="ada", key_text="a red bulb")
        before = ([t.to_dict() for t in store.list_tips(limit=10)[0]], store.marker(), store.entries(VK))
        sizes = {name: (folder / name).stat().st_size for name in (EVENTS_FILE, KEYS_FILE)}
        real_append = store._log.append

        def keys_then_full_disk(lines, keys=None):
            store._log._keys.write(keys.tobytes())  # the key rows got out, the lines did not
            store._log._keys.flush()
            raise OSError(28, "No space left on device")

        store._log.append = keys_then_full_disk
        with pytest.raises(OSError, match="No space left"):
            store.add_episode_tips(tips_of_an_iteration())
        store._log.append = real_append
        assert ([t.to_dict() for t in store.list_tips(limit=10)[0]], store.marker(), store.entries(VK)) == before
        assert {name: (folder / name).stat().st_size for name in (EVENTS_FILE, KEYS_FILE)} == sizes
        again = store.add_episode_tips(tips_of_an_iteration()[:1])  # the next batch goes on from there
        assert again[0].id == "t000001"
    with MemoryStore.open(folder, embedder, capacity=20) as reopened:
        assert [t.id for t in reopened.list_tips(limit=10)[0]] == ["t000001", "p000001"]


def test_a_refused_tip_stores_none_of_its_batch_and_embeds_nothing(tmp_path, embedder):
    counting = CountingEmbedder(embedder)
    with MemoryStore.open(tmp_path / "memory", counting, capacity=20) as store:
        for bad, sentence in (
            (EpisodeTip(VK, "  ", [("k", "a")], 1.0), "cannot be empty"),
            (EpisodeTip(VK, "no steps", [], 1.0), "at least one step"),
            (EpisodeTip(VK, "nan", [("k", "a")], float("nan")), "finite"),
            (EpisodeTip("", "no variation", [("k", "a")], 1.0), "variation_key"),
        ):
            with pytest.raises(ValueError, match=sentence):
                store.add_episode_tips(tips_of_an_iteration()[:2] + [bad])
        assert store.count() == 0 and counting.calls == []


def test_the_host_sets_its_thread_pools_up_before_torch_loads(monkeypatch):
    """OpenMP threads that spin while they wait, and numpy's spinning BLAS team, made a busy
    machine tenfold slower; the command line sets both before anything imports torch, and keeps
    what a person set."""
    environ = {"OPENBLAS_NUM_THREADS": "2"}
    cpu_threads.configure(environ)
    assert environ == {"OMP_WAIT_POLICY": "PASSIVE", "OPENBLAS_NUM_THREADS": "2"}
    for name in cpu_threads.THREAD_ENV:  # set, then removed: the test's end restores either way
        monkeypatch.setenv(name, "")
        monkeypatch.delenv(name)
    from empo2.cli import main

    with pytest.raises(SystemExit):  # --help: the command line ran and printed its usage
        main(["--help"])
    assert {n: os.environ.get(n) for n in cpu_threads.THREAD_ENV} == cpu_threads.THREAD_ENV
