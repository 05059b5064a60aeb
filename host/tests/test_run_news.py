"""The one reader of a run's news (server/runs/run_news.py): what a trainer wrote to its run
folder since the last read, as notifications, for the host's own run and for a run another
process trains alike."""

from __future__ import annotations

import json

from empo2.run_folder.folder import RunFolder
from empo2.server.runs.run_news import RunNews


def ended(iteration: int, done: int, total: int = 3) -> dict:
    episode_id = f"i{iteration:06d}-e{done - 1:04d}"
    return {
        "iteration": iteration,
        "done": done,
        "total": total,
        "summary": {"id": episode_id, "iteration": iteration},
        "record": {"id": episode_id, "iteration": iteration, "steps": []},
    }


def told(news: list[tuple[str, dict]]) -> list:
    """Each notification in short: ended episodes by iteration, done and ids; a written
    iteration by its ids; metrics by their iterations; progress by its name."""
    short = {
        "trajectory/progress": lambda p: (p["iteration"], p["done"], [s["id"] for s in p["summaries"]]),
        "trajectory/added": lambda p: ([s["id"] for s in p["summaries"]],),
        "run/metrics": lambda p: ([r["iteration"] for r in p["records"]],),
        "run/progress": lambda p: (),
    }
    return [(method, *short[method](params)) for method, params in news]


def test_each_ended_episode_is_told_once_then_its_iteration_then_its_metrics(tmp_path):
    folder = RunFolder.create(tmp_path, "run", {"iterations": 2})
    news = RunNews("run", folder)
    assert news.read() == []
    folder.write_progress({"iteration": 1, "phase": "rollout", "done": 2, "total": 5})
    folder.write_ended_episode(ended(1, 1), first=True)
    folder.write_ended_episode(ended(1, 2), first=False)
    assert told(news.read()) == [
        ("run/progress",),
        ("trajectory/progress", 1, 2, ["i000001-e0000", "i000001-e0001"]),
    ]
    assert news.read() == []  # nothing new, nothing told
    folder.write_ended_episode(ended(1, 3), first=False)
    folder.write_trajectories(1, [], [{"id": f"i000001-e000{n}", "iteration": 1} for n in range(3)])
    folder.append_metrics({"iteration": 1})
    assert told(news.read()) == [
        ("trajectory/progress", 1, 3, ["i000001-e0002"]),
        ("trajectory/added", ["i000001-e0000", "i000001-e0001", "i000001-e0002"]),
        ("run/metrics", [1]),
    ]


def test_a_new_iteration_s_file_is_read_from_its_start_even_where_it_kept_the_inode(tmp_path):
    # A dropped file's inode number can come back for the next one; a file rewritten in place
    # keeps it for sure. The episodes' own order tells the new file, which is read whole.
    folder = RunFolder.create(tmp_path, "run", {"iterations": 2})
    news = RunNews("run", folder)
    folder.write_ended_episode(ended(1, 1), first=True)
    folder.write_ended_episode(ended(1, 2), first=False)
    assert told(news.read())[-1][1:3] == (1, 2)
    padding = {"padding": "x" * 400}  # longer than the old file: a read from its old end would land mid-line
    with open(folder.ended_episodes_path, "w") as f:
        f.write(json.dumps({**ended(2, 1), **padding}) + "\n" + json.dumps(ended(2, 2)) + "\n")
    assert told(news.read()) == [("trajectory/progress", 2, 2, ["i000002-e0000", "i000002-e0001"])]
    with open(folder.ended_episodes_path, "w") as f:  # shorter than what was read: from its start too
        f.write(json.dumps(ended(3, 1)) + "\n")
    assert told(news.read()) == [("trajectory/progress", 3, 1, ["i000003-e0000"])]


def test_a_line_being_written_waits_and_what_came_before_the_reader_is_history(tmp_path):
    folder = RunFolder.create(tmp_path, "run", {"iterations": 2})
    folder.append_metrics({"iteration": 1})
    news = RunNews("run", folder)  # a run first seen now: its written metrics are history
    with open(folder.metrics_path, "a") as f:
        f.write('{"iteration": 2')  # torn: the writer is mid-line
    assert news.read() == []
    with open(folder.metrics_path, "a") as f:
        f.write("}\n")
    assert told(news.read()) == [("run/metrics", [2])]
