"""Runs that another process trains, followed live by a host that only reads them: a terminal's
`empo2-host train` (a real subprocess), and a run whose lock another process holds while this
test writes its files, change by change."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
import time

import pytest

from conftest import tiny_run_overrides
from empo2.atomic import atomic_write_json
from empo2.run_folder.folder import RunFolder
from empo2.server.transport.protocol import load_schema
from server_support import check, connect, copy_run, finished_run, make_host  # noqa: F401  (check: fixture)

FOLLOW_S = 0.2


@pytest.fixture
def host(tmp_path, embedder):
    host = make_host([tmp_path / "runs"], embedder, follow_interval_s=FOLLOW_S)
    yield host
    host.stop()


def notes(client, method: str, run_id: str) -> list[dict]:
    return [
        m["params"]
        for m in client.notifications
        if m["method"] == method and m["params"].get("runId", m["params"].get("run", {}).get("runId")) == run_id
    ]


@contextlib.contextmanager
def other_process_holding(folder: RunFolder):
    """Another process holds the run's writer lock, as a trainer does, until the block ends."""
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            (
                "import sys; from empo2.run_folder.folder import RunFolder\n"
                "with RunFolder(sys.argv[1]).writer_lock():\n"
                "    print('held', flush=True); sys.stdin.read()"
            ),
            str(folder.path),
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "held"
        yield
    finally:
        holder.stdin.close()
        holder.wait(timeout=30)


def lines(path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_a_run_trained_in_a_terminal_shows_up_writes_on_and_finishes_live(host, check, tmp_path, tiny_policy):
    root = tmp_path / "runs"
    root.mkdir()
    config = tmp_path / "config.json"
    config.write_text(json.dumps(tiny_run_overrides(tiny_policy, iterations=3)))
    client = connect(host, check, "watcher")
    try:
        train = subprocess.run(
            [
                sys.executable,
                "-m",
                "empo2.cli",
                "train",
                "--config",
                str(config),
                "--root",
                str(root),
                "--name",
                "term",
            ],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=600,
            env=dict(os.environ, EMPO2_NO_PROGRESS="1"),
        )
        assert train.returncode == 0, train.stderr
        client.wait_for(
            lambda m: (
                m["method"] == "run/state"
                and m["params"]["run"]["runId"] == "term"
                and m["params"]["run"]["state"] == "finished"
            ),
            timeout=30,
        )
        states = [n["run"] for n in notes(client, "run/state", "term")]
        assert states[0]["state"] in ("starting", "running") and not any(s["live"] for s in states)
        assert (states[-1]["state"], states[-1]["iteration"]) == ("finished", 3)
        # Every iteration written after the run showed up came live, in order, as written.
        metrics = [r for n in notes(client, "run/metrics", "term") for r in n["records"]]
        written = lines(root / "term" / "metrics.jsonl")
        assert len(metrics) >= 2 and metrics == written[len(written) - len(metrics) :]
        summaries = [s for n in notes(client, "trajectory/added", "term") for s in n["summaries"]]
        index = lines(root / "term" / "trajectories" / "index.jsonl")
        assert summaries and summaries == index[len(index) - len(summaries) :]
        assert {s["iteration"] for s in summaries} >= {2, 3}
        # Where it was within its iterations, as its trainer wrote it (progress.json).
        progress = [n["progress"] for n in notes(client, "run/progress", "term")]
        phases = load_schema()["$defs"]["Progress"]["properties"]["phase"]["enum"]
        assert progress and all(
            1 <= p["iteration"] <= 3 and p["phase"] in phases and p["phase"] != "preparing" for p in progress
        ), progress
        assert client.request("run.status", {"runId": "term"})["run"]["progress"] is None
        assert not (root / "term" / "progress.json").exists()
        assert not (root / "term" / "ended-episodes.jsonl").exists()  # dropped when it ended
    finally:
        client.close()


def test_a_held_run_is_followed_change_by_change_until_its_writer_lets_go(
    host, check, tmp_path_factory, tmp_path, tiny_policy, embedder
):
    from empo2.memory.store import MemoryStore

    root = tmp_path / "runs"
    folder = RunFolder(copy_run(finished_run(tmp_path_factory, tiny_policy, embedder), root))
    metric, summary = lines(folder.metrics_path)[-1], lines(folder.index_path)[-1]
    client = connect(host, check, "watcher")
    try:
        with other_process_holding(folder):  # it trains the run; this test writes in its name
            folder.set_state("running", iteration=2)
            shown = client.wait_for(lambda m: m["method"] == "run/state" and m["params"]["run"]["runId"] == "done")
            assert (shown["params"]["run"]["state"], shown["params"]["run"]["live"]) == ("running", False)
            assert notes(client, "run/metrics", "done") == []  # what was written before is history
            with MemoryStore.open(folder.memory_path, embedder) as writer:
                first = client.request("memory.list", {"runId": "done", "limit": 1000})["items"]  # a client looks
                # A line being written waits for its end; then it comes whole, once.
                with open(folder.metrics_path, "ab") as f:
                    f.write(json.dumps(dict(metric, iteration=3)).encode()[:20])
                time.sleep(5 * FOLLOW_S)  # several looks
                assert notes(client, "run/metrics", "done") == []
                mark = len(client.notifications)
                with open(folder.metrics_path, "ab") as f:
                    f.write(json.dumps(dict(metric, iteration=3)).encode()[20:] + b"\n")
                folder.write_trajectories(3, [], [dict(summary, iteration=3)])
                tip = writer.add_tip(first[0]["variationKey"], "the cell was in the shed", 100.0, author="Ada")
                writer.update(first[0]["id"], "open the shed first", expected_version=first[0]["version"], author="Bob")
                folder.set_state("running", iteration=3)
                where = {"iteration": 4, "phase": "rollout", "done": 2, "total": 9}
                folder.write_progress(where)
                client.wait_for(
                    lambda m: m["method"] == "run/progress" and m["params"]["progress"] == where, start=mark
                )
                assert client.request("run.status", {"runId": "done"})["run"]["progress"] == where
                client.wait_for(lambda m: m["method"] == "memory/changed", start=mark)
                client.wait_for(
                    lambda m: m["method"] == "run/state" and m["params"]["run"]["iteration"] == 3, start=mark
                )
                assert [r["iteration"] for n in notes(client, "run/metrics", "done") for r in n["records"]] == [3]
                assert [
                    [s["iteration"] for s in n["summaries"]] for n in notes(client, "trajectory/added", "done")
                ] == [[3]]
                changes = [c for n in notes(client, "memory/changed", "done") for c in n["changes"]]
                assert [(c["change"], c["tip"]["id"], c["by"]["kind"], c["by"]["name"]) for c in changes] == [
                    ("added", tip.id, "person", "Ada"),
                    ("updated", first[0]["id"], "person", "Bob"),
                ]
                assert changes[1]["tip"]["text"] == "open the shed first" and changes[1]["tip"]["version"] == 2
                listed = client.request("memory.list", {"runId": "done", "limit": 1000})["items"]
                assert len(listed) == len(first) + 1  # the read is as current as the notifications
                assert len(notes(client, "memory/changed", "done")) == 1  # and announced nothing twice
            folder.set_state("finished", iteration=3)
        ended = client.wait_for(lambda m: m["method"] == "run/state" and m["params"]["run"]["state"] == "finished")
        assert ended["params"]["run"]["iteration"] == 3
        # A progress.json its writer left (killed before it could remove it) says nothing now.
        assert client.request("run.status", {"runId": "done"})["run"]["progress"] is None
        # The writer let go: this host opens the store itself, and an edit lands.
        added = client.request(
            "memory.add", {"runId": "done", "variationKey": first[0]["variationKey"], "text": "Look in the attic."}
        )["tip"]
        assert added["text"] == "Look in the attic."
    finally:
        client.close()


def test_a_followed_run_s_episodes_come_as_they_end_and_open_before_their_iteration_is_written(
    host, check, tmp_path_factory, tmp_path, tiny_policy, embedder
):
    """A run another process trains streams the episodes of its iteration in progress like the
    host's own (trajectory/progress from ended-episodes.jsonl), and one of them opens before the
    iteration is written; the next iteration's file is read from its start."""
    root = tmp_path / "runs"
    folder = RunFolder(copy_run(finished_run(tmp_path_factory, tiny_policy, embedder), root))
    summary = lines(folder.index_path)[-1]
    record = folder.trajectory(summary["id"])

    def ended(iteration, n, done, total):
        episode_id = f"i{iteration:06d}-e{9000 + n:04d}"  # ids no written iteration has
        return {
            "iteration": iteration,
            "done": done,
            "total": total,
            "summary": dict(summary, id=episode_id, iteration=iteration),
            "record": dict(record, id=episode_id, iteration=iteration),
        }

    def progress_of(mark):
        return [
            (n["iteration"], n["done"], n["total"], [s["id"] for s in n["summaries"]])
            for n in notes(client, "trajectory/progress", "done")[mark:]
        ]

    client = connect(host, check, "watcher")
    try:
        with other_process_holding(folder):  # it trains the run; this test writes in its name
            folder.write_ended_episode(ended(3, 0, 1, 4), first=True)  # ended before it was seen
            folder.set_state("running", iteration=2)
            client.wait_for(lambda m: m["method"] == "trajectory/progress")
            assert progress_of(0) == [(3, 1, 4, ["i000003-e9000"])]
            folder.write_ended_episode(ended(3, 1, 2, 4), first=False)
            client.wait_for(lambda m: len(notes(client, "trajectory/progress", "done")) == 2)
            assert progress_of(1) == [(3, 2, 4, ["i000003-e9001"])]  # only what is new
            opened = client.request("trajectory.get", {"runId": "done", "episodeId": "i000003-e9001"})
            assert opened["provisional"] is True and opened["episode"]["id"] == "i000003-e9001"
            # The iteration is written and the next one's first episode ends: a new file.
            folder.drop_ended_episodes()
            time.sleep(3 * FOLLOW_S)
            folder.write_ended_episode(ended(4, 0, 1, 4), first=True)
            client.wait_for(lambda m: len(notes(client, "trajectory/progress", "done")) == 3)
            assert progress_of(2) == [(4, 1, 4, ["i000004-e9000"])]
            folder.set_state("finished", iteration=4)
        client.wait_for(lambda m: m["method"] == "run/state" and m["params"]["run"]["state"] == "finished")
    finally:
        client.close()


def test_a_run_this_host_only_browses_is_not_followed(
    host, check, tmp_path_factory, tmp_path, tiny_policy, embedder, monkeypatch
):
    """A finished run, and one whose run.json says running while nobody holds it (killed): no
    notification, whatever is appended to them, and their run.json is not read again until it
    is rewritten."""
    root = tmp_path / "runs"
    done = RunFolder(copy_run(finished_run(tmp_path_factory, tiny_policy, embedder), root))
    killed = RunFolder(root / "killed")
    shutil.copytree(done.path, killed.path)
    killed.set_state("running", iteration=2)
    reads = []
    state = RunFolder.state
    monkeypatch.setattr(RunFolder, "state", lambda self: reads.append(self.path.name) or state(self))
    client = connect(host, check, "watcher")
    try:
        for folder in (done, killed):
            folder.append_metrics(dict(lines(folder.metrics_path)[-1], iteration=3))
        client.request("memory.list", {"runId": "killed"})
        time.sleep(5 * FOLLOW_S)  # several looks
        assert [m["method"] for m in client.notifications if m["method"] != "log/message"] == []
        reads.clear()
        time.sleep(5 * FOLLOW_S)
        assert reads == [], "a run.json that did not change is not read again"
        atomic_write_json(done.path / "run.json", {"state": "finished", "iteration": 3})  # rewritten: read once more
        time.sleep(5 * FOLLOW_S)
        assert reads == ["done"]
    finally:
        client.close()


def test_a_folder_that_cannot_be_read_is_logged_once_and_the_others_are_followed(
    host, check, tmp_path_factory, tmp_path, tiny_policy, embedder, caplog
):
    root = tmp_path / "runs"
    folder = RunFolder(copy_run(finished_run(tmp_path_factory, tiny_policy, embedder), root))
    broken = root / "broken"
    broken.mkdir()
    shutil.copy(folder.path / "config.json", broken / "config.json")
    (broken / "run.json").mkdir()  # reading it fails on every look
    client = connect(host, check, "watcher")
    try:
        with caplog.at_level("WARNING", logger="empo2.server.followed"):
            time.sleep(5 * FOLLOW_S)  # several looks
            with other_process_holding(folder):
                folder.set_state("running", iteration=2)
                client.wait_for(lambda m: m["method"] == "run/state" and m["params"]["run"]["runId"] == "done")
                folder.append_metrics(dict(lines(folder.metrics_path)[-1], iteration=3))
                client.wait_for(lambda m: m["method"] == "run/metrics" and m["params"]["runId"] == "done")
                folder.set_state("finished", iteration=3)
            client.wait_for(lambda m: m["method"] == "run/state" and m["params"]["run"]["state"] == "finished")
        warnings = [r.getMessage() for r in caplog.records if r.name == "empo2.server.followed"]
        assert len(warnings) == 1 and "cannot follow run folder" in warnings[0] and "broken" in warnings[0], warnings
    finally:
        client.close()


def names(table: dict) -> set[str]:
    return {path.name for path in table.copy()}  # copied at once: the follower's thread writes it


def test_a_folder_gone_from_the_roots_is_forgotten(host, check, tmp_path_factory, tmp_path, tiny_policy, embedder):
    """A followed run removed while its writer runs, a finished run and an unreadable folder:
    once gone, the follower keeps nothing of them (a host open for weeks on a folder where runs
    come and go does not grow)."""
    root = tmp_path / "runs"
    held = RunFolder(copy_run(finished_run(tmp_path_factory, tiny_policy, embedder), root))
    quiet = root / "quiet"
    shutil.copytree(held.path, quiet)
    broken = root / "broken"
    broken.mkdir()
    shutil.copy(held.path / "config.json", broken / "config.json")
    (broken / "run.json").mkdir()
    follower = host.server.followed
    client = connect(host, check, "watcher")
    try:
        with other_process_holding(held):
            held.set_state("running", iteration=2)
            client.wait_for(lambda m: m["method"] == "run/state" and m["params"]["run"]["runId"] == "done")
            time.sleep(5 * FOLLOW_S)
            assert (names(follower._followed), names(follower._quiet), names(follower._unreadable)) == (
                {"done"},
                {"quiet"},
                {"broken"},
            )
            for path in (held.path, quiet, broken):
                shutil.rmtree(path)
            time.sleep(5 * FOLLOW_S)
            assert (names(follower._followed), names(follower._quiet), names(follower._unreadable)) == (
                set(),
                set(),
                set(),
            )
    finally:
        client.close()
