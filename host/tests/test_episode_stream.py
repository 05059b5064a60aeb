"""Episodes reported as they end, before their iteration is written: the trainer's `on_episode`
hook, the server's `trajectory/progress` notification, and the `reflection` phase."""

from __future__ import annotations

import threading

import pytest

from conftest import tiny_run_overrides
from empo2.client.host_client import HostError
from empo2.config import load_config
from empo2.run_folder.folder import RunFolder
from empo2.server.runs import run_manager
from empo2.server.transport.fanout import Outbox
from empo2.server.transport.protocol import error_codes
from empo2.training.rollout import episode_generator, roll_out
from empo2.training.run_control import TrainerHooks
from empo2.training.trainer import Trainer
from server_support import SchemaCheck, connect, make_host
from test_rollout import TASK, RecordingEnv, episodes_of, make_settings, policy  # noqa: F401 (a fixture)

# The fields an episode's summary has when it ends; the novelty reward and the tip come later.
ENDED_FIELDS = {
    "id",
    "iteration",
    "task",
    "variation",
    "group",
    "rollout_mode",
    "update_mode",
    "return",
    "success",
    "steps",
}


class Recorder(TrainerHooks):
    def __init__(self, folder: RunFolder | None = None):
        self.calls: list[tuple] = []
        self.counts: list[tuple] = []  # (iteration, phase, done, total) of every progress
        self.folder = folder

    def on_progress(self, iteration, phase, done, total):
        self.calls.append(("progress", iteration, phase))
        self.counts.append((iteration, phase, done, total))
        if self.folder is not None:  # the run folder says it too, for hosts in other processes
            written = self.folder.progress()
            assert (written["iteration"], written["phase"]) == (iteration, phase), written

    def on_episode(self, iteration, summary, record, done, total):
        assert {k: record[k] for k in summary if k != "steps"} == {k: v for k, v in summary.items() if k != "steps"}
        assert len(record["steps"]) == summary["steps"] and record["tip"] is None
        self.calls.append(("episode", iteration, summary, done, total))

    def on_trajectories(self, iteration, summaries):
        self.calls.append(("trajectories", iteration, summaries))


def assert_ended_in_order(ended: list[dict], final: list[dict]):
    """`ended` holds every episode of `final` once, each with the final summary's fields as
    known when it ended, in the order they ended: fewer steps first, then by index."""
    by_id = {s["id"]: s for s in final}
    assert sorted(s["id"] for s in ended) == sorted(by_id)
    for summary in ended:
        assert set(summary) == ENDED_FIELDS, summary
        assert summary == {k: by_id[summary["id"]][k] for k in ENDED_FIELDS}
    order = [(s["steps"], s["id"]) for s in ended]
    assert order == sorted(order), order


def test_roll_out_reports_each_episode_the_moment_it_ends(policy):  # noqa: F811
    model, tokenizer = policy
    episodes = episodes_of([(TASK, 0, 0), (TASK, 1, 1), (TASK, 2, 2)])
    envs = [RecordingEnv(max_steps=n) for n in (3, 1, 2)]
    seen = []

    def ended(i, after):  # what the batch looks like at that moment
        assert len(after) == len(episodes[i].steps)  # its observation after each step
        seen.append((i, [(ep.done, len(ep.steps)) for ep in episodes]))

    roll_out(
        envs,
        episodes,
        model,
        tokenizer,
        make_settings(),
        [episode_generator(0, k) for k in range(3)],
        on_episode_end=ended,
    )
    assert [len(ep.steps) for ep in episodes] == [3, 1, 2]  # the tiny policy solves none in time
    # In the order they end, each once, while the longer ones still play (the turn's later
    # episodes are not stepped yet when an earlier one ends).
    assert seen == [
        (1, [(False, 1), (True, 1), (False, 0)]),
        (2, [(False, 2), (True, 1), (True, 2)]),
        (0, [(True, 3), (True, 1), (True, 2)]),
    ]


@pytest.mark.slow
def test_each_episode_is_reported_as_it_ends_before_its_iteration(tmp_path, tiny_policy, embedder):
    config = load_config(tiny_run_overrides(tiny_policy, iterations=2, **{"eval.every": 0, "env.max_steps": 6}))
    config.root, config.name = str(tmp_path), "run"
    folder = RunFolder.create(tmp_path, "run", config.to_dict())
    hooks = Recorder(folder)
    Trainer(config, folder, hooks=hooks, embedder=embedder).run()
    assert not folder.progress_path.exists(), "nothing is in progress once the run ends"

    ends = [i for i, c in enumerate(hooks.calls) if c[0] == "trajectories"]
    assert [hooks.calls[i][1] for i in ends] == [1, 2]
    finals = [hooks.calls[i][2] for i in ends]
    for iteration, start, end, final in zip((1, 2), [-1] + ends, ends, finals):
        calls = hooks.calls[start + 1 : end]  # the iteration's calls before it is written
        ended = [c for c in calls if c[0] == "episode"]
        assert all(c[1] == iteration for c in ended)
        assert [(c[3], c[4]) for c in ended] == [(k, len(final)) for k in range(1, len(final) + 1)]
        assert_ended_in_order([c[2] for c in ended], final)
        # The iteration's phases in order: rollout, reflection (the tips written, once every
        # episode has ended), novelty, storing (the tips stored), update.
        phases = [c[2] for c in calls if c[0] == "progress"]
        assert (
            phases.index("rollout")
            < phases.index("reflection")
            < phases.index("novelty")
            < phases.index("storing")
            < phases.index("update")
        ), phases
        assert "reflection" not in phases[phases.index("novelty") :], "the writing is over, not stuck at its last tip"
        assert calls.index(("progress", iteration, "reflection")) > calls.index(ended[-1])
        # The update counts its optimizer steps up, after a first report with no count yet.
        steps = int(folder.metrics()[iteration - 1]["update/optimizer_steps"])
        update = [(done, total) for i, phase, done, total in hooks.counts if (i, phase) == (iteration, "update")]
        assert steps > 1 and update == [(0, 1)] + [(k, steps) for k in range(1, steps + 1)]
        # The reflection counts the tips written, from none to every episode's, never down.
        tips = [(done, total) for i, phase, done, total in hooks.counts if (i, phase) == (iteration, "reflection")]
        assert tips[0] == (0, len(final)) and tips[-1] == (len(final), len(final)), tips
        assert len(tips) > 2 and all(a[0] <= b[0] and b[1] == len(final) for a, b in zip(tips, tips[1:])), tips
        # Storing counts the tips stored of those written: one batch, so none, then all.
        written = sum(1 for s in final if s["tip_id"])
        stored = [(done, total) for i, phase, done, total in hooks.counts if (i, phase) == (iteration, "storing")]
        assert written and stored == [(0, written), (written, written)], stored


@pytest.mark.slow
def test_the_server_sends_episodes_as_they_end_valid_and_before_trajectory_added(tmp_path, tiny_policy, embedder):
    check = SchemaCheck()
    host = make_host([tmp_path / "runs"], embedder)
    client = connect(host, check, "watcher")
    quiet = connect(host, check, "script", initialize=False)
    quiet.initialize("script", {"progress": False})
    try:
        config = tiny_run_overrides(tiny_policy, iterations=1, **{"eval.every": 0})
        client.request("run.start", {"config": config, "name": "stream"})
        client.wait_for(lambda m: m["method"] == "run/state" and m["params"]["run"]["state"] == "finished", timeout=600)
        notes = client.notifications
        added = next(i for i, m in enumerate(notes) if m["method"] == "trajectory/added")
        progress = [(i, m["params"]) for i, m in enumerate(notes) if m["method"] == "trajectory/progress"]
        final = notes[added]["params"]["summaries"]
        assert progress and all(i < added for i, _ in progress)
        assert all(p["runId"] == "stream" and p["iteration"] == 1 and p["total"] == len(final) for _, p in progress)
        assert progress[-1][1]["done"] == len(final)
        assert_ended_in_order([s for _, p in progress for s in p["summaries"]], final)
        phases = [m["params"]["progress"]["phase"] for m in notes if m["method"] == "run/progress"]
        assert "reflection" in phases
        # A client that turned progress off gets the record only.
        quiet.wait_for(lambda m: m["method"] == "run/state" and m["params"]["run"]["state"] == "finished")
        assert any(m["method"] == "trajectory/added" for m in quiet.notifications)
        assert not any(m["method"] in ("trajectory/progress", "run/progress") for m in quiet.notifications)
        check.assert_clean()
    finally:
        quiet.close()
        client.close()
        host.stop()


# What an episode's record knows when it ends and keeps once written; the rest (novelty rewards,
# the tip) comes after the rollout.
PLAYED = (
    "observation",
    "prompt",
    "prompt_no_tips",
    "tips",
    "tip_ids",
    "action",
    "executed_action",
    "action_ids",
    "behaviour_logprobs",
    "reward",
    "score",
    "next_observation",
)


@pytest.mark.slow
def test_an_ended_episode_opens_as_it_ended_until_its_iteration_is_written(
    tmp_path, tiny_policy, embedder, monkeypatch
):
    # The trainer is held at the reflection (every episode ended, nothing written) until the
    # client has looked: no race with the write.
    looked, held = threading.Event(), threading.Event()
    on_progress = run_manager._Hooks.on_progress

    def hold_at_reflection(self, iteration, phase, done, total):
        on_progress(self, iteration, phase, done, total)
        if phase == "reflection" and not held.is_set():
            held.set()
            assert looked.wait(120)

    monkeypatch.setattr(run_manager._Hooks, "on_progress", hold_at_reflection)
    check = SchemaCheck()
    host = make_host([tmp_path / "runs"], embedder)
    client = connect(host, check, "watcher")
    try:
        config = tiny_run_overrides(tiny_policy, iterations=1, **{"eval.every": 0})
        client.request("run.start", {"config": config, "name": "live"})
        assert held.wait(300)
        # Every episode has ended in the trainer; its notifications travel over the socket, so the
        # client waits for the last one (done == total) before reading what it was told.
        client.wait_for(
            lambda m: m["method"] == "trajectory/progress" and m["params"]["done"] == m["params"]["total"], timeout=60
        )
        ended = [
            s for m in client.notifications if m["method"] == "trajectory/progress" for s in m["params"]["summaries"]
        ]
        assert ended
        as_ended = {}
        for summary in ended:
            got = client.request("trajectory.get", {"runId": "live", "episodeId": summary["id"]})
            assert got["provisional"] is True
            episode = got["episode"]
            assert {k: episode[k] for k in summary if k != "steps"} == {
                k: v for k, v in summary.items() if k != "steps"
            }
            assert len(episode["steps"]) == summary["steps"] and episode["tip"] is None
            assert all(step["intrinsic"] == 0 for step in episode["steps"])
            as_ended[summary["id"]] = episode
        with pytest.raises(HostError) as err:
            client.request("trajectory.get", {"runId": "live", "episodeId": "i000001-e9999"})
        assert err.value.code == error_codes()["EpisodeNotFound"]
        assert client.request("trajectory.list", {"runId": "live"})["total"] == 0, "nothing written yet"
        looked.set()

        client.wait_for(lambda m: m["method"] == "run/state" and m["params"]["run"]["state"] == "finished", timeout=600)
        for episode_id, before in as_ended.items():
            got = client.request("trajectory.get", {"runId": "live", "episodeId": episode_id})
            assert "provisional" not in got, "the record, written"
            record = got["episode"]
            assert [{k: s[k] for k in PLAYED} for s in record["steps"]] == [
                {k: s[k] for k in PLAYED} for s in before["steps"]
            ], "the same steps as played"
            assert isinstance(record["tip"], str) and "intrinsic" in record
        check.assert_clean()
    finally:
        looked.set()
        client.close()
        host.stop()


def test_a_slow_clients_episodes_are_joined_within_one_iteration_only():
    out = Outbox(limit=10)
    seq = iter(range(100, 200)).__next__

    def ended(s, iteration, done, episode):
        return {
            "jsonrpc": "2.0",
            "method": "trajectory/progress",
            "params": {
                "seq": s,
                "runId": "a",
                "iteration": iteration,
                "done": done,
                "total": 2,
                "summaries": [{"id": episode}],
            },
        }

    out.put_notification(ended(1, 1, 1, "i1-e0"), seq)
    out.put_notification(ended(2, 1, 2, "i1-e1"), seq)
    out.put_notification(ended(3, 2, 1, "i2-e0"), seq)
    queued = [m["params"] for m in list(out._items)]
    assert [(p["iteration"], p["done"], [s["id"] for s in p["summaries"]]) for p in queued] == [
        (1, 2, ["i1-e0", "i1-e1"]),
        (2, 1, ["i2-e0"]),
    ]
