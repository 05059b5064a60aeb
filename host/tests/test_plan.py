"""`empo2-host plan` and `export`: figures that follow from the parameter count, and bad input
answered in one sentence."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from empo2.config import load_config
from empo2.training.plan import GIB, PlanError, parse_memory, plan


def _paper(strategy: str):
    return load_config("scienceworld-power-component", [f"dist.strategy={strategy}"])


def test_the_paper_model_is_counted_on_the_meta_device():
    result = plan(_paper("fsdp2"), world=8)
    assert result["parameters"] == 7_615_616_512  # Qwen2.5-7B-Instruct, embeddings untied


@pytest.mark.parametrize("world", [2, 8])
def test_fsdp2_divides_weights_gradients_and_adam_by_the_world(world):
    ddp, fsdp = plan(_paper("ddp"), world)["per_rank_gib"], plan(_paper("fsdp2"), world)["per_rank_gib"]
    params = plan(_paper("ddp"), world)["parameters"]
    # mixed-bfloat16: fp32 master weights, fp32 gradients, two fp32 Adam moments.
    assert ddp["parameters"] == pytest.approx(4 * params / GIB, abs=0.01)
    assert ddp["optimizer"] == pytest.approx(8 * params / GIB, abs=0.01)
    for kind in ("parameters", "gradients", "optimizer"):
        assert fsdp[kind] == pytest.approx(ddp[kind] / world, abs=0.01)


def test_the_paper_setting_fits_80gb_only_sharded():
    gpu = parse_memory("80GB")
    assert plan(_paper("fsdp2"), 8, gpu)["fits"] is True
    assert plan(_paper("ddp"), 8, gpu)["fits"] is False


def test_lora_trains_a_small_fraction():
    config = load_config("scienceworld-power-component-lora")
    result = plan(config, 8)
    assert 0 < result["trainable_parameters"] < 0.05 * result["parameters"]


def test_bad_input_is_one_sentence():
    with pytest.raises(PlanError, match="must look like 80GB"):
        parse_memory("eighty")
    config = load_config(None, ["policy.model=no/such-model"])
    with pytest.raises(PlanError, match="no config.json for model"):
        plan(config, 1)
    run = subprocess.run(
        [sys.executable, "-m", "empo2.cli", "plan", "--preset", "builtin", "--world", "0"],
        capture_output=True,
        text=True,
    )
    assert run.returncode == 2 and run.stderr.count("\n") == 1 and "--world" in run.stderr
    run = subprocess.run(
        [sys.executable, "-m", "empo2.cli", "export", "/nonexistent", "--out", "x"], capture_output=True, text=True
    )
    assert run.returncode == 2 and "neither a run folder nor a checkpoint" in run.stderr
    assert "Traceback" not in run.stderr


def test_plan_prints_json(tmp_path):
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "empo2.cli",
            "plan",
            "--preset",
            "scienceworld-power-component",
            "--world",
            "8",
            "--gpu-memory",
            "141GB",
            "dist.strategy=fsdp2",
        ],
        capture_output=True,
        text=True,
    )
    assert run.returncode == 0, run.stderr
    result = json.loads(run.stdout)
    assert result["fits"] is True and result["world"] == 8 and result["gpu_memory_gib"] == 141.0
