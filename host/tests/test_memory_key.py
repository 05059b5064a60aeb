"""What a tip is stored under (memory.key): one entry per step keyed by the step's user turn (the
default), or one entry per episode keyed by its final conversation (the final reference code).
"""

from __future__ import annotations

import dataclasses
import json
import sys
from pathlib import Path

import pytest

from conftest import tiny_run_overrides
from empo2.config import ConfigError, load_config
from empo2.envs.builtin.env import BuiltinEnv
from empo2.memory.store import MemoryStore
from empo2.policy.model import load_policy
from empo2.policy.prompting import clip_words
from empo2.run_folder.folder import RunFolder
from empo2.training.rollout import RolloutSettings, tip_entries
from empo2.training.trainer import Trainer
from test_rollout import TASK, KeyEmbedder, make_settings, play


def selectivity_tool():
    """host/benchmarks/memory_key_selectivity.py as a module."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
    import memory_key_selectivity

    return memory_key_selectivity


@pytest.fixture(scope="module")
def policy(tiny_policy):
    return load_policy(str(tiny_policy))


def final_conversation(description: str, steps: list[tuple[str, str]], words: int = 10) -> str:
    """The user turn after an episode's last step, written out by hand: the task, its last three
    steps (action -> observation) and the final observation (three times the words)."""
    history = " ; ".join(f"{action} -> {clip_words(obs, words)}" for action, obs in steps[-3:])
    return f"task : {description} . history : {history} . now : {clip_words(steps[-1][1], 3 * words)}"


def test_the_step_key_stores_every_step_under_its_own_user_turn_and_action(policy):
    settings = make_settings()
    [ep], [after], _ = play(policy, [(TASK, 0, 0)], settings, max_steps=(4,))
    assert settings.memory_key == "step"  # the default
    assert tip_entries(ep, after, settings) == [(s.user_text, s.executed_action) for s in ep.steps]


def test_the_episode_key_stores_one_entry_keyed_by_the_final_conversation(policy):
    settings = make_settings(memory_key="episode")
    [ep], [after], _ = play(policy, [(TASK, 0, 0)], settings, max_steps=(4,))
    assert len(ep.steps) == 4
    steps = [(s.executed_action, o) for s, o in zip(ep.steps, after)]
    assert tip_entries(ep, after, settings) == [(final_conversation(ep.description, steps), "")]


def test_retrieval_finds_an_episode_keyed_tip_by_its_final_conversation_only(policy):
    """With the per-step key the first step's turn retrieves the tip; with the per-episode key
    only a query like the episode's end does (the test embedder: cosine 1 for the same text)."""
    found = {}
    for key in ("step", "episode"):
        settings = make_settings(memory_key=key)
        [ep], [after], _ = play(policy, [(TASK, 0, 0)], settings, max_steps=(3,))
        store = MemoryStore(KeyEmbedder(), capacity=10)
        tip = store.add_episode_tip(
            ep.variation_key, "the cell is in the shed", tip_entries(ep, after, settings), score=100.0
        )
        final = final_conversation(ep.description, [(s.executed_action, o) for s, o in zip(ep.steps, after)])
        hits = store.retrieve(ep.variation_key, [ep.steps[0].user_text, final], threshold=0.5, top_k=10)
        found[key] = [[h.tip_id for h in row] for row in hits]
        assert store.count(ep.variation_key) == 1 and len(store.entries(ep.variation_key)) == (
            len(ep.steps) if key == "step" else 1
        )
    assert found["step"] == [[tip.id], []]
    assert found["episode"][0] == [] and len(found["episode"][1]) == 1


def test_a_run_with_the_episode_key_stores_one_entry_per_tip(tmp_path, tiny_policy, embedder):
    config = load_config(tiny_run_overrides(tiny_policy, iterations=1, **{"memory.key": "episode", "eval.every": 0}))
    config.root, config.name = str(tmp_path), "run"
    folder = RunFolder.create(tmp_path, "run", config.to_dict())
    trainer = Trainer(config, folder, embedder=embedder)
    trainer.run()
    records = [
        json.loads(line)
        for path in sorted(folder.path.glob("trajectories/iter-*.jsonl"))
        for line in path.read_text().splitlines()
    ]
    try:
        for record in records:
            key = f"{record['task']}/{record['variation']}"
            entries = [e for e in trainer.memory.entries(key) if e["tip_id"] == record["tip_id"]]
            steps = [(s["executed_action"], s["next_observation"]) for s in record["steps"]]
            assert [(e["key_text"], e["action"]) for e in entries] == [
                (final_conversation(record["description"], steps), "")
            ]
        # The selectivity tool rebuilds the run's episodes and stores them as the run did.
        settings = RolloutSettings.from_config(config, None, train=True)
        [played] = selectivity_tool().recorded_iterations(folder, 0)
        assert [tip_entries(ep, after, settings) for ep, after in played] == [
            [
                (e["key_text"], e["action"])
                for e in trainer.memory.entries(ep.variation_key)
                if e["tip_id"] == r["tip_id"]
            ]
            for (ep, _), r in zip(played, records)
        ]
    finally:
        trainer.close()
    assert records and all(r["tip_id"] for r in records)


def test_the_memory_key_is_a_choice():
    assert load_config("builtin").memory.key == "step"
    assert load_config("builtin", ["memory.key=episode"]).memory.key == "episode"
    with pytest.raises(ConfigError, match="'memory.key' must be one of step, episode"):
        load_config("builtin", ["memory.key=turn"])


def test_the_selectivity_report_replays_episodes_into_one_memory_per_key(embedder):
    """host/benchmarks/memory_key_selectivity.py on two rounds of scripted episodes: the step key
    stores an entry per distinct step, the episode key one per tip; every figure is a share."""
    tool = selectivity_tool()
    config = load_config("builtin-bench", ["env.max_steps=6"])
    iterations = tool.simulated_iterations(config, rounds=2, seed=0)
    assert len(iterations) == 2 and all(ep.tip for played in iterations for ep, _ in played)
    base = RolloutSettings.from_config(config, None, train=True)
    report = {
        key: tool.selectivity(iterations, dataclasses.replace(base, memory_key=key), embedder, capacity=1000)
        for key in tool.KEYS
    }
    episodes = [ep for played in iterations for ep, _ in played]
    assert report["episode"]["entries"] == report["episode"]["tips"] <= len(episodes)
    assert report["step"]["entries"] > report["step"]["tips"]
    for figures in report.values():
        kept = list(figures["kept_by_threshold"].values())
        assert kept == sorted(kept, reverse=True) and all(0 <= k <= 1 for k in kept)
        variations = BuiltinEnv().variations("power-device", "train")
        assert figures["same_variation"]["chance"] == pytest.approx(1 / len(variations))
        assert 0 <= figures["retrieval"]["success_share"] <= 1
