"""The benchmark scripts run: the GPU check's code path on CPU (--smoke), env steps per adapter,
and the iteration time split. No GPU here: the real GPU check runs on a CUDA machine."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow
BENCH = Path(__file__).resolve().parents[1] / "benchmarks"


def _run(args, timeout=600):
    env = dict(os.environ, EMPO2_NO_PROGRESS="1", HF_HUB_OFFLINE="1")
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, timeout=timeout, env=env)


def test_gpu_check_smoke_runs_the_whole_path_on_cpu():
    result = _run([str(BENCH / "gpu_check.py"), "--smoke"])
    assert result.returncode == 0, result.stderr[-3000:]
    reports = json.loads(result.stdout.strip().splitlines()[-1])
    assert [r["strategy"] for r in reports] == ["ddp", "fsdp2"]  # both strategies, one run
    for report in reports:
        assert report["rollout_tokens_per_s"] > 0 and report["update_tokens_per_s"] > 0
    assert "rollout tokens/s" in result.stdout and "MFU" in result.stdout
    assert "fsdp2/ddp update_tokens_per_s" in result.stdout


def test_env_steps_prints_steps_per_second_for_each_adapter():
    result = _run([str(BENCH / "env_steps.py"), "--seconds", "0.5", "--env", "all"])
    assert result.returncode == 0, result.stderr[-3000:]
    for name in ("built-in", "scienceworld", "textworld"):
        assert name in result.stdout


def test_iteration_split_prints_every_phase(tiny_policy):
    result = _run([str(BENCH / "iteration_split.py"), "--policy", str(tiny_policy), "--iterations", "2",
                   "--p-memory", "1", "algo.batch_tasks=1", "algo.group_size=2", "env.max_steps=3"])
    assert result.returncode == 0, result.stderr[-3000:]
    for phase in ("generation", "environment", "retrieval", "tips", "update"):
        assert phase in result.stdout


def test_the_tip_probe_reports_every_condition(tiny_policy):
    result = _run([str(BENCH / "probe_tips.py"), "--policy", str(tiny_policy), "--variations", "1",
                   "--repeats", "1"])
    assert result.returncode == 0, result.stderr[-3000:]
    assert "4 held-out variations x 1 rollouts per condition" in result.stdout
    for condition in ("no memory", "success tip", "failure tip"):
        assert condition in result.stdout
    assert result.stdout.count("rooms visited:") == 3


def test_serve_startup_measures_both_paths_of_the_real_host():
    result = _run([str(BENCH / "serve_startup.py"), "--repeats", "1", "--settle", "0"])
    assert result.returncode == 0, result.stderr[-3000:]
    report = json.loads(result.stdout.strip().splitlines()[-1])
    for path in ("lazy", "eager"):
        assert report["median"][path]["ready_s"] > 0 and report["median"][path]["idle_rss_mib"] > 0
    assert "eager / lazy: ready" in result.stdout
