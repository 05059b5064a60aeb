"""`empo2-host export-onnx`, run as a user would: the folder it writes, and one sentence per mistake.

The numbers the graph computes are checked against PyTorch where they are used, by
onnxruntime-node in the extension's unit tier (test/unit/onnxScoring.unit.test.ts); here the
ONNX reference evaluator (the `onnx` package's own interpreter) checks the graph's logits for
left-padded rows against the policy's forward, so the host side fails on its own when it breaks.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

HOST = [sys.executable, "-m", "empo2.cli"]


def run(args, cwd):
    env = dict(os.environ, EMPO2_NO_PROGRESS="1", HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
    return subprocess.run(HOST + ["export-onnx", *args], cwd=cwd, capture_output=True, text=True, timeout=600, env=env)


def assert_one_sentence(result, message):
    assert result.returncode == 2, result.stderr
    assert message in result.stderr
    assert "Traceback" not in result.stderr
    assert result.stderr.strip().count("\n") == 0, result.stderr


def test_a_missing_source_is_one_sentence(tmp_path):
    assert_one_sentence(run([str(tmp_path / "nope")], tmp_path), "there is no run, checkpoint or model folder")


def test_a_folder_that_is_no_model_is_one_sentence(tmp_path):
    (tmp_path / "notes").mkdir()
    assert_one_sentence(run([str(tmp_path / "notes")], tmp_path), "is not a run, a checkpoint or a model folder")


def test_a_run_without_checkpoints_is_one_sentence(tmp_path):
    from empo2.run_folder.folder import RunFolder

    RunFolder.create(tmp_path, "r", {"name": "r"})
    assert_one_sentence(run([str(tmp_path / "r")], tmp_path), "has no checkpoint yet")


@pytest.fixture(scope="module")
def exported(tiny_policy, tmp_path_factory):
    """The tiny policy, copied so the default output folder lands in a temporary place."""
    model = tmp_path_factory.mktemp("export") / "policy"
    shutil.copytree(tiny_policy, model)
    result = run([str(model)], model.parent)
    assert result.returncode == 0, result.stderr[-3000:]
    return model, json.loads(result.stdout.strip().splitlines()[-1])


def test_a_model_folder_exports_next_to_itself_with_its_tokenizer(exported):
    from empo2.export.onnx import MANIFEST_FILE
    from empo2.policy.model import load_tokenizer

    model, manifest = exported
    out = model.parent / "policy-onnx"
    assert manifest["path"] == str(out)
    assert json.loads((out / MANIFEST_FILE).read_text()) == {k: v for k, v in manifest.items() if k != "path"}
    tokenizer = load_tokenizer(str(out))  # the tokenizer files load by themselves
    tokens = json.loads((out / manifest["tokens"]).read_text())
    assert len(tokens) == manifest["vocabSize"] == len(tokenizer)
    assert tokens[manifest["eosId"]] == tokenizer.eos_token
    assert [p.name for p in model.parent.iterdir() if p.name.startswith(".")] == []  # no temporary left
    assert manifest["temperature"] is None and manifest["run"] is None


def test_the_graph_has_dynamic_axes_and_the_policys_logits(exported):
    import numpy as np
    import onnx
    import torch
    from onnx.reference import ReferenceEvaluator

    from empo2.policy.generation import pad_layout
    from empo2.policy.model import load_policy

    model_folder, manifest = exported
    graph = onnx.load(str(Path(manifest["path"]) / manifest["model"]))
    onnx.checker.check_model(graph)
    for value in [*graph.graph.input, *graph.graph.output][:3]:
        dims = value.type.tensor_type.shape.dim
        assert dims[0].dim_param and dims[1].dim_param, f"{value.name} has fixed batch or sequence"
    policy, _ = load_policy(str(model_folder))
    ids, mask, positions = pad_layout([[7, 8, 9, 10, 11], [12, 13]], [[14, 15], [16, 17, 18]], 0, "cpu")
    with torch.no_grad():
        expected = policy(input_ids=ids, attention_mask=mask, position_ids=positions).logits.numpy()
    (logits,) = ReferenceEvaluator(graph).run(None, {"input_ids": ids.numpy(), "attention_mask": mask.numpy()})
    real = mask.numpy().astype(bool)  # pads' logits are never read
    assert np.abs(logits[real] - expected[real]).max() < 1e-4


def test_an_export_is_never_written_over(exported):
    model, manifest = exported
    assert_one_sentence(run([str(model), "--out", manifest["path"]], model.parent), "exists and is not empty")


def test_the_builtin_policy_exports_into_the_cache_never_beside_the_shipped_copy(tmp_path, monkeypatch):
    from empo2.export.onnx import default_out
    from empo2.policy.builtin import SHIPPED_DIR

    monkeypatch.setenv("EMPO2_CACHE_DIR", str(tmp_path))
    out = default_out("builtin")
    assert out.is_relative_to(tmp_path / "policies") and out.name.endswith("-onnx")
    assert not out.is_relative_to(SHIPPED_DIR.parent)
