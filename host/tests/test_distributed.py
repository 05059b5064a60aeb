"""torch.distributed on CPU with gloo and two processes (torchrun): the same update as one
process, and a distributed run that resumes where it stopped."""

from __future__ import annotations

import json
import os
import pickle
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from conftest import tiny_run_overrides
from distributed_support import one_update
from empo2.config import load_config
from empo2.envs.builtin.env import BuiltinEnv
from empo2.policy.model import load_policy
from empo2.training.rollout import Episode, RolloutSettings, roll_out

pytestmark = pytest.mark.slow
HERE = Path(__file__).parent


def torchrun(args: list[str], cwd, timeout=600) -> subprocess.CompletedProcess:
    env = dict(
        os.environ,
        OMP_NUM_THREADS="1",
        EMPO2_NO_PROGRESS="1",
        EMPO2_DEBUG="1",
        PYTHONPATH=os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")]),
    )
    return subprocess.run(
        [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", "2", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def _episodes(policy) -> list[Episode]:
    """Three GRPO groups of real built-in episodes with tips shown (so off-policy ratios move)."""
    model, tokenizer = load_policy(str(policy))
    episodes = [
        Episode(id=f"e{g}{n}", task=task, variation=g, group=g, rollout_mode="memory")
        for g, task in enumerate(["power-device", "grow-plant", "heat-food"])
        for n in range(2)
    ]
    config = load_config({"policy": {"max_action_tokens": 6, "history_steps": 3, "observation_words": 10}})
    settings = RolloutSettings.from_config(config, BuiltinEnv(), train=True)
    roll_out(
        [BuiltinEnv(max_steps=4) for _ in episodes],
        episodes,
        model,
        tokenizer,
        settings,
        torch.Generator().manual_seed(0),
    )
    for e, ep in enumerate(episodes):  # distinct returns inside each group
        ep.steps[-1].reward += 25.0 * (e % 2)
    return episodes


@pytest.mark.parametrize("update_mode", ["on-policy", "off-policy"])
def test_two_ranks_take_the_one_process_step(tmp_path, tiny_policy, update_mode):
    episodes = _episodes(tiny_policy)
    with open(tmp_path / "episodes.pkl", "wb") as f:
        pickle.dump((episodes, update_mode), f)
    result = torchrun(
        [
            str(HERE / "distributed_support.py"),
            str(tiny_policy),
            str(tmp_path / "episodes.pkl"),
            str(tmp_path / "out.pt"),
        ],
        tmp_path,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    two = torch.load(tmp_path / "out.pt", weights_only=False)
    one = one_update(str(tiny_policy), episodes, update_mode)

    assert set(one["stats"]) == set(two["stats"])
    assert_same_step(one, two)


def assert_same_step(one: dict, two: dict) -> None:
    """Two processes' step (statistics, gradients, parameters) equals one process's, to float
    summation order."""
    # ratio_std is a per-micro-batch spread: it depends on how rows are split (as micro_batch
    # does in one process); every other statistic is a token-weighted mean, max or min.
    for key, value in ((k, v) for k, v in one["stats"].items() if k != "ratio_std"):
        assert two["stats"][key] == pytest.approx(value, rel=1e-4, abs=1e-6), key
    assert set(one["grads"]) == set(two["grads"]) and one["grads"]
    for name, grad in one["grads"].items():
        assert torch.allclose(two["grads"][name], grad, rtol=1e-4, atol=1e-6), name
    for name, param in one["params"].items():
        assert torch.allclose(two["params"][name], param, rtol=1e-4, atol=1e-6), name


def _lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _metrics(run: Path) -> list[dict]:
    return [
        {k: v for k, v in m.items() if k != "time" and not k.startswith(("time/", "throughput/"))}
        for m in _lines(run / "metrics.jsonl")
    ]


def test_a_resumed_distributed_run_continues_as_the_uninterrupted_one(tmp_path, tiny_policy):
    config = tiny_run_overrides(
        tiny_policy,
        iterations=3,
        **{"algo.p_memory": 0.5, "algo.q_off_policy": 0.5, "algo.batch_tasks": 2, "eval.every": 0},
    )
    for name, iterations in (("straight", 3), ("stopped", 2)):
        path = tmp_path / f"{name}.json"
        path.write_text(json.dumps({**config, "iterations": iterations}))
        result = torchrun(
            ["-m", "empo2.cli", "train", "--config", str(path), "--root", str(tmp_path / "runs"), "--name", name],
            tmp_path,
        )
        assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.count('"run"') == 2  # rank 0 alone prints (start and end lines)

    stopped = tmp_path / "runs" / "stopped"
    resumed = torchrun(["-m", "empo2.cli", "resume", str(stopped), "iterations=3"], tmp_path)
    assert resumed.returncode == 0, resumed.stderr[-3000:]

    straight = tmp_path / "runs" / "straight"
    assert [m["iteration"] for m in _metrics(stopped)] == [1, 2, 3]
    assert _metrics(stopped) == _metrics(straight)
    assert (stopped / "memory" / "events.jsonl").read_text().count("\n") == (
        straight / "memory" / "events.jsonl"
    ).read_text().count("\n")
    for it in (1, 2, 3):
        name = f"trajectories/iter-{it:06d}.jsonl"
        assert (stopped / name).read_text() == (straight / name).read_text()
    groups = {ep["group"] for ep in _lines(straight / "trajectories/iter-000001.jsonl")}
    assert groups == {0, 1}  # both ranks' groups are in rank 0's record
