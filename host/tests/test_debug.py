"""Debug sessions (empo2/debug/, docs/debugging.md): one episode turn by turn and token by token,
forced actions, rewinding, teacher-forced replay; through the real protocol too.

The policies are real (the tiny built-in policy, a real two-iteration run's checkpoints), the
environment is the real built-in world; nothing is mocked.
"""

from __future__ import annotations

import math
import time

import pytest
import torch

from empo2.client.host_client import HostError
from empo2.config import load_config
from empo2.debug.launch import Launch, LaunchError, open_session
from empo2.debug.session import DebugStateError
from empo2.envs.registry import make_env
from empo2.run_folder.folder import RunFolder
from empo2.server.transport.protocol import error_codes
from empo2.training.rollout import Episode, roll_out
from server_support import check, connect, copy_run, finished_run, make_host  # noqa: F401 - check is a fixture

CODES = error_codes()
TASK, VARIATION = "power-device", 0


@pytest.fixture(scope="module")
def run_path(tmp_path_factory, tiny_policy, embedder):
    root = tmp_path_factory.mktemp("debug-root")
    return copy_run(finished_run(tmp_path_factory, tiny_policy, embedder), root)


def launch(run_path, **fields) -> Launch:
    base = dict(
        task=TASK,
        variation=VARIATION,
        seed=3,
        mode="memory-free",
        temperature=None,
        device="cpu",
        run=RunFolder.open(run_path),
    )
    return Launch(**{**base, **fields})


def test_a_session_plays_the_turns_a_rollout_plays(run_path, embedder):
    """Same checkpoint, seed and generator: the debugger's turns are the rollout's steps (one
    implementation of prompting, sampling and stepping, not two)."""
    session, info = open_session(launch(run_path), embedder)
    assert info["checkpoint"] == 2 and info["mode"] == "memory-free" and info["replay"] is None
    while not session.done:
        turn, executed = session.step("turn")
        assert executed
    episode = Episode(id="ref", task=TASK, variation=VARIATION, group=3, rollout_mode="memory-free")
    roll_out(
        [make_env(load_config(RunFolder.open(run_path).config()).env)],
        [episode],
        session.model,
        session.tokenizer,
        session.spec.settings,
        torch.Generator().manual_seed(3),
    )
    assert [t.action for t in session.turns] == [s.action for s in episode.steps]
    assert [t.prompt_ids for t in session.turns] == [s.prompt_ids for s in episode.steps]
    for turn, step in zip(session.turns, episode.steps):
        assert [t.logprob for t in turn.tokens] == pytest.approx(step.behaviour_logprobs, abs=1e-6)
        assert turn.executed_action == step.executed_action and turn.reward == step.reward
    with pytest.raises(DebugStateError):
        session.step("turn")


def test_token_steps_reveal_the_turn_then_execute_it(run_path, embedder):
    session, _ = open_session(launch(run_path, seed=5), embedder)
    turn, executed = session.step("token")
    assert not executed and session.pending.revealed == 1
    n = len(turn.tokens)
    assert n >= 1
    for j in range(2, n + 1):
        turn, executed = session.step("token")
        assert not executed and session.pending.revealed == j
    for token in turn.tokens:
        assert len(token.alternatives) == 5
        best = token.alternatives[0][2]
        assert token.logprob <= best + 1e-5  # the top-1 is at least as likely as any token
        assert all(a[2] >= b[2] for a, b in zip(token.alternatives, token.alternatives[1:]))
        assert token.logprob_no_tips == pytest.approx(token.logprob, abs=1e-4)  # no tips: same prompt
    turn, executed = session.step("token")  # past the last token: the turn executes
    assert executed and turn.executed and len(session.turns) == 1 and session.pending is None


def test_a_forced_action_is_executed_scored_and_rewinding_replays_a_turn(run_path, embedder):
    session, _ = open_session(launch(run_path, seed=1), embedder)
    session.step("turn")
    forced = session.force("look around")
    assert forced.forced and forced.executed and forced.index == 1 and forced.tokens
    assert math.isfinite(forced.min_logprob) and forced.min_logprob <= 0
    session.step("turn")
    assert len(session.turns) == 3
    before = session.turns[1]
    previous = session.rewind(1)
    assert previous is before and len(session.turns) == 1
    assert session.observation == session.turns[0].next_observation
    again, executed = session.step("turn")
    assert executed and again.index == 1
    with pytest.raises(DebugStateError):
        session.rewind(7)


def test_memory_mode_retrieves_tips_with_similarity_and_score(run_path, embedder):
    from empo2.memory.store import MemoryStore

    folder = RunFolder.open(run_path)
    store = MemoryStore.open(None, embedder)  # a copy of nothing: fill it with one known tip
    session, _ = open_session(launch(run_path, mode="memory", seed=2), embedder)
    key = f"{TASK}/{VARIATION}"
    store.add_episode_tip(
        key,
        "press the switch first",
        steps=[(session.first_observation, "press switch")],
        score=100.0,
        provenance={"run": folder.run_id, "iteration": 0, "episode": "x", "step": 1, "score": 100.0},
    )
    turn, _ = session.step("turn", store)
    assert turn.tip_ids and turn.tips and len(turn.tip_similarity) == len(turn.tip_ids)
    assert turn.tip_score[0] == 100.0 and -1.0 <= turn.tip_similarity[0] <= 1.0
    assert "<tip>" in turn.prompt and "<tip>" not in turn.user_text
    assert turn.prompt_ids != turn.prompt_ids_no_tips
    assert any(abs(t.logprob - t.logprob_no_tips) > 1e-6 for t in turn.tokens)


def test_replay_with_the_producing_checkpoint_reproduces_the_recorded_logprobs(run_path, embedder):
    """Iteration 2's episodes were played by checkpoint 1: re-scored by it they match the
    recorded behaviour log-probs; the newer checkpoint 2 (one update later) does not."""
    folder = RunFolder.open(run_path)
    record = next(iter(folder.trajectories(2)))
    session, info = open_session(
        launch(run_path, record=record, record_run=folder, task=None, variation=None), embedder
    )
    summary = info["replay"]
    assert info["checkpoint"] == 1 and summary["turns"] == len(record["steps"])
    assert summary["maxLogprobError"] < 1e-4
    assert summary["advantage"] is not None and summary["updateMode"] == record["update_mode"]
    first = session.spec.replay_scores[0]
    assert all(
        t.ratio == pytest.approx(1.0, abs=1e-3) or record["update_mode"] == "off-policy" for t in first["tokens"]
    )
    assert all(isinstance(t.masked, bool) for t in first["tokens"])
    while not session.done:
        turn, _ = session.step("turn")
        assert turn.replay["observationMatches"] is True
        assert turn.action == record["steps"][turn.index]["action"]
    assert [t.executed_action for t in session.turns] == [s["executed_action"] for s in record["steps"]]
    _, newer = open_session(
        launch(run_path, record=record, record_run=folder, checkpoint=2, task=None, variation=None), embedder
    )
    assert newer["checkpoint"] == 2 and newer["replay"]["maxLogprobError"] > 1e-4
    assert summary["playedBy"] == 1 and summary["note"] is None
    assert newer["replay"]["playedBy"] == 1 and newer["replay"]["note"].startswith(
        "Checkpoint 1 played this episode; checkpoint 2, as launched, replays it, so its log π differ"
    )


def test_a_replay_whose_checkpoint_is_no_longer_kept_says_so(run_path, embedder):
    """Iteration 1's episodes were played by checkpoint 0, which the run (keep_checkpoints 2)
    deleted after iteration 2: the newest replays them, and the session says which, why, how far
    its log π are from the recorded ones, and what comes nearer."""
    folder = RunFolder.open(run_path)
    assert folder.checkpoint_iterations() == [1, 2]
    record = next(iter(folder.trajectories(1)))
    _, info = open_session(launch(run_path, record=record, record_run=folder, task=None, variation=None), embedder)
    summary = info["replay"]
    assert info["checkpoint"] == 2 and summary["playedBy"] == 0 and summary["maxLogprobError"] > 1e-4
    mantissa, exponent = f"{summary['maxLogprobError']:.1e}".split("e")
    error = f"{mantissa}e{int(exponent):+d}"  # as the debug console writes it: 7.8e-1
    assert summary["note"] == (
        "Checkpoint 0, which played this episode, is no longer kept (the run keeps its newest 2: "
        f"keep_checkpoints), so checkpoint 2 replays it and its log π differ from the recorded ones "
        f'(max |Δ log p| {error}). Checkpoint 1 is the nearest one kept (launch attribute "checkpoint"). '
        "A run started with a larger keep_checkpoints keeps older ones."
    )


def test_a_replay_whose_checkpoint_was_never_saved_says_so(run_path, tmp_path, embedder):
    """With checkpoint_every 2 the checkpoint of iteration 1 is never written: the note names
    that setting, not keep_checkpoints."""
    import json
    import shutil

    from empo2.run_folder.folder import iteration_name

    copy = copy_run(run_path, tmp_path)
    config = json.loads((copy / "config.json").read_text())
    (copy / "config.json").write_text(json.dumps({**config, "checkpoint_every": 2}))
    folder = RunFolder.open(copy)
    shutil.rmtree(folder.checkpoints_path / iteration_name(1))
    record = next(iter(folder.trajectories(2)))
    _, info = open_session(launch(copy, record=record, record_run=folder, task=None, variation=None), embedder)
    note = info["replay"]["note"]
    assert info["checkpoint"] == 2 and info["replay"]["playedBy"] == 1
    assert note.startswith(
        "Checkpoint 1, which played this episode, was never saved (the run saves "
        "one every 2 iterations: checkpoint_every), so checkpoint 2 replays it"
    )
    assert note.endswith("A run started with checkpoint_every 1 saves every one.") and "nearest" not in note


def test_advantages_of_a_replay_are_the_updates_own():
    from empo2.algo.losses import group_advantages
    from empo2.config import load_config
    from empo2.debug.replay import training_advantage

    def record(i, group, reward):
        step = {
            "observation": "o",
            "prompt_no_tips": "p",
            "prompt_ids": [1],
            "prompt_ids_no_tips": [1],
            "action": "a",
            "executed_action": "a",
            "action_ids": [2],
            "behaviour_logprobs": [-0.1],
            "reward": reward,
            "intrinsic": 0.0,
        }
        return {"id": f"i000001-e{i:04d}", "task": TASK, "variation": 0, "group": group, "steps": [step]}

    records = [record(0, 0, 100.0), record(1, 0, 0.0), record(2, 1, 50.0), record(3, 1, 50.0)]
    config = load_config("builtin")
    expected = group_advantages(torch.tensor([1.0, 0.0, 0.5, 0.5]), torch.tensor([0, 0, 1, 1]))
    got = [training_advantage(r, records, config) for r in records]
    assert got == pytest.approx(expected.tolist(), abs=1e-6) and got[0] > 0 > got[1] and got[2] == 0


def test_a_bad_launch_is_one_sentence(run_path, embedder):
    with pytest.raises(LaunchError, match="no task 'fly'"):
        open_session(launch(run_path, task="fly"), embedder)
    with pytest.raises(LaunchError, match="no checkpoint of iteration 9"):
        open_session(launch(run_path, checkpoint=9), embedder)


# -- through the protocol -------------------------------------------------------------------------


@pytest.fixture(scope="module")
def host(run_path, embedder):
    host = make_host([run_path.parent], embedder)
    yield host
    host.stop()


def test_debug_methods_through_a_real_host(host, check, run_path):
    run_id = run_path.name
    with connect(host, check) as client:
        started = client.request(
            "debug.start",
            {"runId": run_id, "task": TASK, "variation": VARIATION, "seed": 4, "device": "cpu"},
            timeout=120,
        )["session"]
        sid = started["sessionId"]
        assert started["checkpoint"] == 2 and started["alongsideTraining"] is False and started["runState"] is None
        token = client.request("debug.step", {"sessionId": sid, "unit": "token"})
        assert token["executed"] is False and token["revealed"] == 1
        turn = client.request("debug.step", {"sessionId": sid, "unit": "turn"})
        assert turn["executed"] and turn["turn"]["executedAction"] and turn["episode"]["turns"] == 1
        forced = client.request("debug.force", {"sessionId": sid, "action": "look around"})
        assert forced["turn"]["forced"] and forced["turn"]["index"] == 1
        replayed = client.request("debug.replayTurn", {"sessionId": sid, "turn": 1})
        assert replayed["previous"]["forced"] and not replayed["turn"]["forced"]
        state = client.request("debug.state", {"sessionId": sid})
        assert len(state["turns"]) == 2 and state["pending"] is None
        with connect(host, check) as other:  # sessions belong to their connection
            err = pytest.raises(HostError, other.request, "debug.step", {"sessionId": sid}).value
            assert err.code == CODES["DebugSessionNotFound"]
        err = pytest.raises(HostError, client.request, "debug.replayTurn", {"sessionId": sid, "turn": 9}).value
        assert err.code == CODES["DebugStateInvalid"] and "no turn 9" in err.message
        err = pytest.raises(HostError, client.request, "debug.start", {"runId": run_id}).value
        assert err.code == CODES["InvalidParams"]
        record_id = next(iter(RunFolder.open(run_path).trajectories(2)))["id"]
        replay = client.request(
            "debug.start", {"replay": {"runId": run_id, "episodeId": record_id}, "device": "cpu"}, timeout=120
        )["session"]
        assert replay["replay"]["maxLogprobError"] < 1e-4 and replay["checkpoint"] == 1
        rturn = client.request("debug.step", {"sessionId": replay["sessionId"]})
        assert rturn["turn"]["replay"]["observationMatches"] is True and rturn["episode"]["replaying"]
        assert client.request("debug.stop", {"sessionId": sid}) == {"stopped": True}
        err = pytest.raises(HostError, client.request, "debug.stop", {"sessionId": sid}).value
        assert err.code == CODES["DebugSessionNotFound"]
    assert {
        "debug.start",
        "debug.step",
        "debug.force",
        "debug.replayTurn",
        "debug.state",
        "debug.stop",
    } <= check.methods_answered
    # Closing the connection ends its sessions (the replay one was never stopped); the host
    # notices the close on its own loop, so give it a moment.
    deadline = time.monotonic() + 30
    while host.server.debug.entries and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not host.server.debug.entries


def test_a_replay_beside_a_paused_run_names_the_run_state_and_the_checkpoint_it_lacks(
    tmp_path, tiny_policy, embedder, check
):
    """A run paused after iteration 1 that keeps one checkpoint: an episode of iteration 1
    (played by checkpoint 0) replays with checkpoint 1, the session says so, and it calls the run
    paused, not training."""
    from conftest import tiny_run_overrides

    host = make_host([tmp_path / "runs"], embedder)
    try:
        with connect(host, check) as client:
            config = tiny_run_overrides(
                tiny_policy,
                iterations=2,
                keep_checkpoints=1,
                **{"env.tasks": [TASK], "env.train_variations": [VARIATION], "eval.every": 0},
            )
            client.request("run.start", {"config": config, "name": "paused", "pauseAfterIteration": 1})
            client.wait_for(lambda m: m["method"] == "run/state" and m["params"]["run"]["state"] == "paused")
            record_id = next(iter(RunFolder.open(tmp_path / "runs" / "paused").trajectories(1)))["id"]
            session = client.request(
                "debug.start", {"replay": {"runId": "paused", "episodeId": record_id}, "device": "cpu"}, timeout=120
            )["session"]
            assert session["runState"] == "paused" and session["alongsideTraining"] is False
            assert session["checkpoint"] == 1 and session["replay"]["playedBy"] == 0
            note = session["replay"]["note"]
            assert note.startswith(
                "Checkpoint 0, which played this episode, is no longer kept (the run "
                "keeps its newest 1: keep_checkpoints), so checkpoint 1 replays it"
            )
            assert "nearest" not in note  # the one kept is the one replaying
            client.request("debug.stop", {"sessionId": session["sessionId"]})
            client.request("run.stop", {"runId": "paused"})
            client.wait_for(lambda m: m["method"] == "run/state" and m["params"]["run"]["state"] == "stopped")
    finally:
        host.stop()


# A hallway whose reset (or step, from its second one) counts how often the environment was
# called when DRIFT says so: not a function of its seed, so a replay cannot show what was recorded.
DRIFTING_HALLWAY = """
from empo2.envs import StepInfo

DRIFT = {"reset": False, "step": False}
CALLS = [0]
GOAL = "walk to the end of the hallway"


class Hallway:
    def reset(self, seed):
        CALLS[0] += 1
        self.position, self.steps = 0, 0
        lamp = f" the lamp has flickered {CALLS[0]} times ." if DRIFT["reset"] else ""
        return "you stand in a hallway ." + lamp, StepInfo(GOAL, ["walk", "wait"])

    def step(self, action):
        CALLS[0] += 1
        self.steps += 1
        self.position += action == "walk"
        done = self.position >= 3
        clock = f" a clock strikes {CALLS[0]} ." if DRIFT["step"] and self.steps >= 2 else ""
        return (f"you have walked {self.position} steps ." + clock, 30.0 * (action == "walk"), done,
                StepInfo(GOAL, ["walk", "wait"], score=30.0 * self.position, success=done))
"""


def test_a_replay_whose_environment_shows_another_observation_says_at_which_turn_with_both_texts(
    tmp_path, monkeypatch, tiny_policy, embedder, check
):
    """An environment found by name whose reset is not deterministic in its seed: the replay
    says so at turn 0 with both texts, through the protocol, and plays on from the
    environment's own state instead of the recording; one whose second step drifts, at turn 1.
    With the environment deterministic again, nothing is said and every turn is the recording's."""
    import importlib

    from conftest import tiny_run_overrides
    from empo2.training.trainer import Trainer

    (tmp_path / "drifting_hallway.py").write_text(DRIFTING_HALLWAY)
    monkeypatch.syspath_prepend(str(tmp_path))
    hallway = importlib.import_module("drifting_hallway")
    overrides = tiny_run_overrides(tiny_policy, iterations=1, **{"eval.every": 0, "env.max_steps": 4})
    del overrides["env"]["tasks"]
    overrides["env"]["name"] = "drifting_hallway:Hallway"
    config = load_config(overrides)
    root = tmp_path / "runs"
    config.root, config.name = str(root), "hallway"
    folder = RunFolder.create(root, "hallway", config.to_dict())
    trainer = Trainer(config, folder, embedder=embedder)
    trainer.run()
    trainer.memory.close()
    trainer.close()
    record = next(r for r in folder.trajectories(1) if len(r["steps"]) >= 2)
    recorded_first = record["steps"][0]["observation"]

    hallway.DRIFT["reset"] = True
    host = make_host([root], embedder)
    try:
        with connect(host, check) as client:
            session = client.request(
                "debug.start", {"replay": {"runId": "hallway", "episodeId": record["id"]}, "device": "cpu"}, timeout=120
            )["session"]
            mismatch = session["replay"]["observationMismatch"]
            assert mismatch["turn"] == 0 and mismatch["recorded"] == recorded_first == "you stand in a hallway ."
            assert mismatch["replayed"].startswith("you stand in a hallway . the lamp has flickered ")
            assert mismatch["message"].startswith(
                "The replay left the recording at turn 0: the environment's "
                f"reset with seed {record['group']} showed another first observation"
            )
            step = client.request("debug.step", {"sessionId": session["sessionId"]}, timeout=120)
            assert step["episode"]["observationMismatch"] == mismatch and not step["episode"]["replaying"]
            assert step["turn"]["replay"] is None  # the policy's own turn, from the environment's state
            assert step["turn"]["observation"] == mismatch["replayed"]
    finally:
        host.stop()

    hallway.DRIFT.update(reset=False, step=True)
    replay = launch(root / "hallway", record=record, record_run=folder, task=None, variation=None)
    session, info = open_session(replay, embedder)
    assert info["replay"]["observationMismatch"] is None and session.replaying
    first, _ = session.step("turn")
    assert first.replay["observationMatches"] is True and session.observation_mismatch is None
    second, _ = session.step("turn")
    assert second.replay["observationMatches"] is False and not session.replaying
    mismatch = session.observation_mismatch
    assert mismatch["turn"] == 1 and mismatch["recorded"] == record["steps"][1]["next_observation"]
    assert mismatch["replayed"] == second.next_observation and " a clock strikes " in mismatch["replayed"]
    assert f"the recorded action {record['steps'][1]['action']!r}" in mismatch["message"]
    if not session.done:  # the next turn is the policy's, not the recording's
        assert session.step("turn")[0].replay is None

    hallway.DRIFT["step"] = False
    session, info = open_session(replay, embedder)
    while not session.done:
        turn, _ = session.step("turn")
        assert turn.replay["observationMatches"] is True and session.observation_mismatch is None
    assert [t.action for t in session.turns] == [s["action"] for s in record["steps"]]
