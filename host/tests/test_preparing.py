"""A run whose built-in policy must be built first: the build's progress counts the whole build
(so a bar's ETA covers all of it), and a run stopped while it builds leaves nothing in the cache."""

from __future__ import annotations

import io
import json

import pytest
from tqdm import tqdm

from conftest import TINY_EPISODES, tiny_run_overrides
from empo2.cli.progress import imitation_progress as _imitation_progress
from empo2.policy import builtin
from server_support import SchemaCheck, connect, make_host


def test_the_build_bar_counts_every_epoch_and_names_the_epoch_of_how_many():
    out = io.StringIO()
    bar = tqdm(file=out)
    update = _imitation_progress(bar, epochs=3)
    for done in range(1, 7):  # 3 epochs of 2 steps
        update(done, 6, (done - 1) // 2, 1.0 / done)
    assert bar.total == 6 and bar.n == 6  # one bar over the build, not one per epoch
    assert bar.desc.startswith("building the built-in policy (epoch 3/3)")
    bar.close()


def test_a_build_reports_progress_over_the_whole_build_and_stops_when_told(tmp_path):
    recipe = builtin.BuiltinRecipe(size="tiny", episodes=TINY_EPISODES, epochs=3)
    seen = []

    def progress(done, total, epoch, loss):
        seen.append((done, total, epoch))
        if done == total - 1:
            raise builtin.BuildCancelled()

    with pytest.raises(builtin.BuildCancelled):
        builtin.build_builtin_policy(recipe, tmp_path / "policy", progress)
    total = seen[0][1]
    steps = total // 3
    assert [d for d, _, _ in seen] == list(range(1, total))  # counted across epochs
    assert {t for _, t, _ in seen} == {total} and total == 3 * steps
    assert [e for _, _, e in seen] == [(d - 1) // steps for d in range(1, total)]
    assert list(tmp_path.iterdir()) == []  # nothing written, not even a temporary folder


@pytest.mark.slow
def test_stopping_a_run_while_its_policy_builds_leaves_the_cache_without_it(tmp_path, monkeypatch, embedder):
    monkeypatch.setenv("EMPO2_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(builtin, "SHIPPED_DIR", tmp_path / "nothing-shipped")
    check = SchemaCheck()
    host = make_host([tmp_path / "runs"], embedder)
    client = connect(host, check, "watcher")
    try:
        config = tiny_run_overrides("builtin", iterations=1)
        client.request("run.start", {"config": config, "name": "first"})
        preparing = client.wait_for(
            lambda m: m["method"] == "run/progress" and m["params"]["progress"]["phase"] == "preparing", timeout=300
        )
        progress = preparing["params"]["progress"]
        assert progress["iteration"] == 0 and 1 <= progress["done"] < progress["total"]
        client.request("run.stop", {"runId": "first"})
        client.wait_for(lambda m: m["method"] == "run/state" and m["params"]["run"]["state"] == "stopped", timeout=120)
        policies = tmp_path / "cache" / "policies"
        assert [p.name for p in policies.iterdir() if not p.name.endswith(".lock")] == []
        record = json.loads((tmp_path / "runs" / "first" / "run.json").read_text())
        assert record["state"] == "stopped"
        check.assert_clean()
    finally:
        client.close()
        host.stop()
