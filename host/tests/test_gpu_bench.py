"""The GPU bench's code path on CPU (--smoke): both arms on two seeds, the warm start evaluated,
the paired comparison printed, then one ScienceWorld iteration. No GPU here: the real bench
runs on a CUDA machine."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow
SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "gpu_bench.py"


def test_gpu_bench_smoke_prints_the_paired_comparison(tmp_path, tiny_policy):
    env = dict(os.environ, EMPO2_NO_PROGRESS="1", HF_HUB_OFFLINE="1", OMP_NUM_THREADS="1")
    result = subprocess.run(
        [
            sys.executable,
            str(SCRIPT),
            "--smoke",
            "--seeds",
            "0,1",
            "--model",
            str(tiny_policy),
            "--out",
            str(tmp_path / "out"),
        ],
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert "EMPO² vs GRPO" in result.stdout and "paired held_out_success" in result.stdout
    summary = json.loads(result.stdout.strip().splitlines()[-1])["summary"]
    assert (summary["method"], summary["baseline"], summary["seeds"]) == ("EMPO²", "GRPO", [0, 1])
    report = json.loads((tmp_path / "out" / "results.json").read_text())
    assert {r["method"] for r in report["runs"]} == {"EMPO²", "GRPO", "warm start (no RL)"}
    assert all(r["iterations"] == 1 for r in report["runs"] if r["method"] != "warm start (no RL)")
    # Then the paper's ScienceWorld setup with the same model, one EMPO² iteration.
    scienceworld = json.loads(result.stdout.strip().splitlines()[-1])["scienceworld"]
    assert scienceworld["iterations"] == 1 and scienceworld["episodes"] == 2, scienceworld
    assert "== ScienceWorld power-component" in result.stdout


def test_gpu_bench_without_a_gpu_says_so_in_one_sentence():
    result = subprocess.run(
        [sys.executable, str(SCRIPT)],
        capture_output=True,
        text=True,
        timeout=120,
        env=dict(os.environ, CUDA_VISIBLE_DEVICES=""),
    )
    assert result.returncode == 2 and "no CUDA device" in result.stderr
    assert "Traceback" not in result.stderr
