"""A hostile environment ends its run `failed` with one sentence that names it and says what it
did, in run.json and the log; what earlier iterations wrote stays (envs/plugin.py).

Each environment below breaks the contract one way; the runs name them as
`test_hostile_envs:<factory>` (this file is importable: its folder is on the path).
"""

from __future__ import annotations

import json
import logging
import threading

import pytest

from conftest import tiny_run_overrides
from empo2.config import ConfigError, load_config
from empo2.envs import EnvironmentFault, StepInfo
from empo2.run_folder.folder import RunFolder
from empo2.training.trainer import Trainer

pytestmark = pytest.mark.slow

NEVER = threading.Event()  # what a hanging step waits for
STEPS = {"taken": 0}  # steps of `fails_mid_run` across its instances


class Room:
    """A well-behaved environment; each fault below overrides one thing."""

    def reset(self, seed):
        return "you are in a room .", StepInfo("leave the room", ["wait", "leave"])

    def step(self, action):
        return "you are still in the room .", 0.0, False, StepInfo("leave the room", ["wait", "leave"])


def raises_on_make():
    raise RuntimeError("the simulator's licence has expired")


class NoStep:
    def reset(self, seed):
        return "a room ."


class WrongShape(Room):
    def step(self, action):
        return "you are still in the room ."


class WrongTypes(Room):
    def step(self, action):
        return "you are still in the room .", "0", False, None


class NanReward(Room):
    def step(self, action):
        return "you are still in the room .", float("nan"), False, None


class InfReward(Room):
    def step(self, action):
        return "you are still in the room .", float("inf"), False, None


class BytesObservation(Room):
    def step(self, action):
        return b"you are still in the room .", 0.0, False, None


class HugeObservation(Room):
    def step(self, action):
        return "a" * (10 * 2**20), 0.0, False, None


class Hangs(Room):
    def step(self, action):
        NEVER.wait()


class FailsMidRun(Room):
    """Fine for `fail_after` steps (all its instances together), then raises."""

    def __init__(self, fail_after: int):
        self.fail_after = fail_after

    def step(self, action):
        STEPS["taken"] += 1
        if STEPS["taken"] > self.fail_after:
            raise KeyError("door")
        return super().step(action)


def fails_mid_run(fail_after: int):
    return FailsMidRun(fail_after)


def hostile_run(tmp_path, tiny_policy, embedder, factory, **overrides):
    """One run on `test_hostile_envs:<factory>`: 1 task × 2 rollouts × 2 steps = 4 steps an
    iteration, a checkpoint after every iteration, no evaluation."""
    name = f"test_hostile_envs:{factory}"
    config = load_config(
        tiny_run_overrides(
            tiny_policy,
            **{
                "env.name": name,
                "env.tasks": [],
                "env.max_steps": 2,
                "iterations": 2,
                "checkpoint_every": 1,
                "algo.batch_tasks": 1,
                "eval.every": 0,
                **overrides,
            },
        )
    )
    config.root, config.name = str(tmp_path), "run"
    folder = RunFolder.create(tmp_path, "run", config.to_dict())
    trainer = Trainer(config, folder, embedder=embedder)
    trainer.run()
    return folder


FAULTS = [
    # factory, env.kwargs, the sentence's start after "environment '<name>' "
    ("no_such_factory", {}, ConfigError, "cannot be found: module 'test_hostile_envs' has no 'no_such_factory'"),
    ("raises_on_make", {}, EnvironmentFault, "raised RuntimeError in its factory: the simulator's licence has expired"),
    ("NoStep", {}, EnvironmentFault, "made a NoStep without step; an environment needs reset and step"),
    (
        "WrongShape",
        {},
        EnvironmentFault,
        "step returned str 'you are still in the room .', not (observation, reward, done, info)",
    ),
    ("WrongTypes", {}, EnvironmentFault, "step returned the reward str '0', not a finite number"),
    ("NanReward", {}, EnvironmentFault, "step returned the reward float nan, not a finite number"),
    ("InfReward", {}, EnvironmentFault, "step returned the reward float inf, not a finite number"),
    ("BytesObservation", {}, EnvironmentFault, "step returned an observation of type bytes, not text"),
    (
        "HugeObservation",
        {},
        EnvironmentFault,
        "step returned an observation of 10,485,760 characters (at most 1,000,000)",
    ),
    ("Hangs", {"env.step_timeout_s": 0.5}, EnvironmentFault, "took more than 0.5 s in step (env.step_timeout_s)"),
]


@pytest.mark.parametrize("factory, overrides, error, said", FAULTS, ids=[f[0] for f in FAULTS])
def test_a_hostile_environment_fails_its_run_with_one_sentence(
    tmp_path, tiny_policy, embedder, caplog, factory, overrides, error, said
):
    sentence = f"environment 'test_hostile_envs:{factory}' {said}."
    with caplog.at_level(logging.ERROR, logger="empo2.trainer"), pytest.raises(error) as raised:
        hostile_run(tmp_path, tiny_policy, embedder, factory, **overrides)
    assert f"{raised.value}." == sentence
    state = json.loads((tmp_path / "run" / "run.json").read_text())
    assert state["state"] == "failed" and state["error"] == sentence and state["iteration"] == 0
    assert [r.getMessage() for r in caplog.records] == [f"the run failed: {sentence}"]


def test_an_exception_mid_run_keeps_the_iterations_and_checkpoints_before_it(tmp_path, tiny_policy, embedder, caplog):
    STEPS["taken"] = 0
    with caplog.at_level(logging.ERROR, logger="empo2.trainer"), pytest.raises(EnvironmentFault):
        hostile_run(tmp_path, tiny_policy, embedder, "fails_mid_run", **{"env.kwargs": {"fail_after": 4}})
    folder = RunFolder.open(tmp_path / "run")
    sentence = "environment 'test_hostile_envs:fails_mid_run' raised KeyError in step: 'door'."
    assert folder.state()["state"] == "failed" and folder.state()["error"] == sentence
    assert folder.state()["iteration"] == 1 and [m["iteration"] for m in folder.metrics()] == [1]
    assert folder.latest_checkpoint()[0] == 1
    assert len(list(folder.trajectory_summaries())) == 2
    assert f"the run failed: {sentence}" in caplog.text


def test_the_host_fails_a_hostile_run_with_its_sentence_and_takes_the_next(tmp_path, tiny_policy, embedder):
    """Through the host the extension starts: the run's state notification, run.status and the
    host's log carry the sentence, and the host goes on to train another run."""
    from server_support import SchemaCheck, connect, make_host

    check = SchemaCheck()
    (tmp_path / "runs").mkdir()
    host = make_host([tmp_path / "runs"], embedder)
    sentence = "environment 'test_hostile_envs:NanReward' step returned the reward float nan, not a finite number."
    try:
        with connect(host, check) as client:
            config = tiny_run_overrides(
                tiny_policy,
                **{
                    "env.name": "test_hostile_envs:NanReward",
                    "env.tasks": [],
                    "env.max_steps": 2,
                    "iterations": 1,
                    "algo.batch_tasks": 1,
                    "eval.every": 0,
                },
            )
            client.request("run.start", {"config": config, "name": "hostile"})
            failed = client.wait_for(
                lambda m: (
                    m["method"] == "run/state"
                    and m["params"]["run"]["runId"] == "hostile"
                    and m["params"]["run"]["state"] == "failed"
                )
            )
            assert failed["params"]["run"]["error"] == sentence
            assert client.request("run.status", {"runId": "hostile"})["run"]["error"] == sentence
            logged = client.request("log.tail", {})["entries"]
            assert any(sentence in json.dumps(entry) for entry in logged)

            good = dict(config, env={**config["env"], "name": "builtin", "tasks": ["power-device"]})
            client.request("run.start", {"config": good, "name": "next"})
            client.wait_for(
                lambda m: (
                    m["method"] == "run/state"
                    and m["params"]["run"]["runId"] == "next"
                    and m["params"]["run"]["state"] == "finished"
                )
            )
        check.assert_clean()
    finally:
        host.stop()
