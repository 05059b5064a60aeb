"""Memory trials (the paper's out-of-distribution test) and their paired memory-free arm."""

from __future__ import annotations

import pytest

from empo2.config import load_config
from empo2.envs.builtin.env import BuiltinEnv
from empo2.policy.model import load_policy
from empo2.training import evaluation
from empo2.training.rollout import RolloutSettings


@pytest.fixture()
def played(monkeypatch, tiny_policy, embedder):
    """memory_trials on the tiny policy, recording what each round read and whether tips were
    written."""
    config = load_config(
        {"env": {"name": "builtin", "max_steps": 3}, "policy": {"max_action_tokens": 6, "max_tip_tokens": 8}}
    )
    settings = RolloutSettings.from_config(config, BuiltinEnv(), train=False)
    model, tokenizer = load_policy(str(tiny_policy))
    log = {"memories": [], "modes": [], "tips_written": 0}
    roll_out, write_tips = evaluation.roll_out, evaluation.write_tips

    def recording_roll_out(envs, episodes, *args):
        log["memories"].append(args[-1])
        log["modes"].append({ep.rollout_mode for ep in episodes})
        return roll_out(envs, episodes, *args)

    def counting_write_tips(episodes, *args, **kwargs):
        log["tips_written"] += len(episodes)
        return write_tips(episodes, *args, **kwargs)

    monkeypatch.setattr(evaluation, "roll_out", recording_roll_out)
    monkeypatch.setattr(evaluation, "write_tips", counting_write_tips)

    def play(with_memory: bool):
        log.update(memories=[], modes=[], tips_written=0)
        result = evaluation.memory_trials(
            model,
            tokenizer,
            config.env,
            [("repair-radio", 100)],
            3,
            settings,
            8,
            embedder,
            seed=5,
            with_memory=with_memory,
        )
        return result, dict(log)

    return play


def test_the_memory_free_arm_plays_every_round_without_memory_and_shares_the_first_round(played):
    with_memory, memory_log = played(True)
    without, free_log = played(False)
    assert memory_log["memories"][0] is None and all(m is not None for m in memory_log["memories"][1:])
    assert memory_log["tips_written"] == 3
    assert free_log["memories"] == [None, None, None]
    assert all(modes == {evaluation.MEMORY_FREE} for modes in free_log["modes"])
    assert free_log["tips_written"] == 0
    assert len(without.success) == len(without.score) == 3
    # The same generator seed and episodes: round 1 is the same episode in both arms.
    assert without.success[0] == with_memory.success[0] and without.score[0] == with_memory.score[0]
