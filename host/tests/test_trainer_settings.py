"""The memory settings of a config reach retrieval and the store in a real training iteration.

The config test checks the defaults; this one checks that a non-default value of
`memory.similarity_threshold`, `memory.top_k` and `memory.capacity` is what the trainer's
rollouts actually retrieve with and what its store keeps (tiny built-in policy, real embedder,
real store).
"""

from __future__ import annotations

import pytest

from conftest import tiny_run_overrides
from empo2.config import load_config
from empo2.memory.store import MemoryStore
from empo2.run_folder.folder import RunFolder
from empo2.training.trainer import Trainer

pytestmark = pytest.mark.slow

THRESHOLD, TOP_K, CAPACITY = 0.125, 1, 3  # none of them a default


def test_memory_settings_reach_retrieval_and_the_store(tmp_path, tiny_policy, embedder, monkeypatch):
    calls = []
    real_retrieve = MemoryStore.retrieve

    def recording_retrieve(self, variation_key, query_texts, threshold=0.5, top_k=10, keep_edited_actions=False):
        # Records what the trainer passes, then runs the real retrieval unchanged.
        calls.append((threshold, top_k, keep_edited_actions))
        return real_retrieve(
            self, variation_key, query_texts, threshold=threshold, top_k=top_k, keep_edited_actions=keep_edited_actions
        )

    monkeypatch.setattr(MemoryStore, "retrieve", recording_retrieve)
    config = load_config(
        tiny_run_overrides(
            tiny_policy,
            **{
                "iterations": 2,
                "eval.every": 0,
                "memory.similarity_threshold": THRESHOLD,
                "memory.top_k": TOP_K,
                "memory.capacity": CAPACITY,
                "memory.edited_tip_actions": "keep",
            },
        )
    )
    config.root, config.name = str(tmp_path), "run"
    folder = RunFolder.create(tmp_path, "run", config.to_dict())
    trainer = Trainer(config, folder, embedder=embedder)
    trainer.run()

    assert calls and set(calls) == {(THRESHOLD, TOP_K, True)}
    # Iteration 2 retrieves from iteration 1's tips: at most top_k entries, so one tip a step.
    steps = [
        s
        for summary in folder.trajectory_summaries()
        if summary["iteration"] == 2
        for s in folder.trajectory(summary["id"])["steps"]
    ]
    assert any(s["tip_ids"] for s in steps) and all(len(s["tip_ids"]) <= TOP_K for s in steps)
    # Every variation's buffer holds at most `capacity` entries, though more were written.
    assert trainer.memory.capacity == CAPACITY
    written = {}
    for summary in folder.trajectory_summaries():
        key = f"{summary['task']}/{summary['variation']}"
        written[key] = written.get(key, 0) + summary["steps"]
    kept = {key: len(trainer.memory.entries(key)) for key in written}
    assert max(written.values()) > CAPACITY
    assert all(kept[key] == min(n, CAPACITY) for key, n in written.items()), (kept, written)
