"""Any Hugging Face causal LM: dtypes, gradient checkpointing, LoRA through peft (trained, saved,
resumed), the KL reference, and the sequence-length budget of prompts.

The checkpoints are ones the tests save themselves (the tiny built-in policy is an ordinary
save_pretrained folder of a Qwen2ForCausalLM with a chat template); no hub access.
"""

from __future__ import annotations

import json

import pytest
import torch

from conftest import tiny_run_overrides
from empo2.config import load_config
from empo2.envs.builtin.env import BuiltinEnv
from empo2.policy.generation import compute_precision, sequence_logprobs
from empo2.policy.model import AdapterFreeView, LoraSettings, is_peft, load_policy, resolve_dtype
from empo2.policy.prompting import step_messages, step_user_text
from empo2.policy.tokenizer import encode_chat
from empo2.run_folder.folder import RunFolder
from empo2.training.rollout import Episode, RolloutSettings, StepRecord, _fit_tips, _fit_user_turn
from empo2.training.trainer import Trainer


def _batch(tokenizer):
    prompt = encode_chat(tokenizer, step_messages("task : turn on the lamp . now : you are in the hall"))
    action = tokenizer.encode("go to kitchen", add_special_tokens=False) + [tokenizer.eos_token_id]
    return [prompt, prompt[3:]], [action, action[:2]]


def test_dtype_auto_is_float32_on_cpu_and_bfloat16_loads_too(tiny_policy):
    assert resolve_dtype("auto", "cpu") == "float32" and resolve_dtype("auto", "cuda:0") == "bfloat16"
    model, _ = load_policy(str(tiny_policy), device="cpu")
    assert next(model.parameters()).dtype == torch.float32
    model, tokenizer = load_policy(str(tiny_policy), device="cpu", dtype="bfloat16")
    assert next(model.parameters()).dtype == torch.bfloat16
    logp, _, _ = sequence_logprobs(model, *_batch(tokenizer), pad_id=tokenizer.pad_token_id)
    assert torch.isfinite(logp).all()


def _changed_by_one_small_step(model, tokenizer, lr: float) -> float:
    """Share of trainable weights that one AdamW step at `lr` actually changes."""
    params = [p for p in model.parameters() if p.requires_grad]
    before = [p.detach().clone() for p in params]
    optimizer = torch.optim.AdamW(params, lr=lr, weight_decay=0.0)
    model.train()
    logp, _, mask = sequence_logprobs(model, *_batch(tokenizer), pad_id=tokenizer.pad_token_id)
    (-(logp * mask).sum() / mask.sum()).backward()
    optimizer.step()
    changed = sum(int((p.detach() != b).sum()) for p, b in zip(params, before))
    return changed / sum(b.numel() for b in before)


def test_mixed_precision_keeps_fp32_master_weights_that_a_1e_6_step_moves(tiny_policy):
    # The paper's full fine-tune runs at lr 1e-6: in pure bf16 almost every such step rounds
    # away; with fp32 master weights and bf16 compute it lands.
    model, tokenizer = load_policy(str(tiny_policy), device="cpu", dtype="mixed-bfloat16")
    assert next(model.parameters()).dtype == torch.float32
    with compute_precision(model):
        assert torch.matmul(torch.ones(2, 2), torch.ones(2, 2)).dtype == torch.bfloat16
    mixed = _changed_by_one_small_step(model, tokenizer, 1e-6)
    model, tokenizer = load_policy(str(tiny_policy), device="cpu", dtype="bfloat16")
    pure = _changed_by_one_small_step(model, tokenizer, 1e-6)
    assert mixed > 0.9 and pure < 0.2, (mixed, pure)


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
def test_auto_dtype_is_bfloat16_on_cuda(tiny_policy):
    model, _ = load_policy(str(tiny_policy), device="cuda")
    assert next(model.parameters()).dtype == torch.bfloat16


def test_gradient_checkpointing_gives_the_same_gradients(tiny_policy):
    grads = []
    for checkpointing in (False, True):
        model, tokenizer = load_policy(str(tiny_policy), gradient_checkpointing=checkpointing)
        model.train()
        logp, _, mask = sequence_logprobs(model, *_batch(tokenizer), pad_id=tokenizer.pad_token_id)
        (logp * mask).sum().backward()
        grads.append(torch.cat([p.grad.flatten() for p in model.parameters() if p.grad is not None]))
        new_name = hasattr(type(model), "is_activation_checkpointing")  # transformers 5 renamed it
        assert (model.is_activation_checkpointing if new_name else model.is_gradient_checkpointing) == checkpointing
    assert torch.allclose(grads[0], grads[1], atol=1e-5)


def test_lora_trains_only_adapters(tiny_policy):
    model, _ = load_policy(str(tiny_policy), lora=LoraSettings(rank=4, alpha=8))
    assert is_peft(model)
    trainable = [n for n, p in model.named_parameters() if p.requires_grad]
    assert trainable and all("lora_" in n for n in trainable)
    with pytest.raises(Exception, match="LoRA target"):
        load_policy(str(tiny_policy), lora=LoraSettings(rank=4, targets=("no_such_proj",)))


def _metrics(folder):
    return [
        {k: v for k, v in m.items() if k != "time" and not k.startswith(("time/", "throughput/"))}
        for m in folder.metrics()
    ]


@pytest.mark.slow
def test_lora_run_saves_only_adapters_and_resumes_exactly(tmp_path, tiny_policy, embedder):
    overrides = {
        "policy.lora_rank": 4,
        "policy.lora_alpha": 8.0,
        "algo.lr": 1e-2,
        "algo.p_memory": 0.5,
        "eval.every": 0,
        "iterations": 2,
    }

    def make(name, iterations):
        config = load_config(tiny_run_overrides(tiny_policy, **{**overrides, "iterations": iterations}))
        folder = RunFolder.create(tmp_path, name, config.to_dict())
        return Trainer(config, folder, embedder=embedder), folder

    straight, straight_folder = make("straight", 2)
    base_before = {n: p.detach().clone() for n, p in straight.model.named_parameters() if "lora_" not in n}
    straight.run()
    after = dict(straight.model.named_parameters())
    assert all(torch.equal(after[n], p) for n, p in base_before.items())  # base frozen
    assert any("lora_B" in n and p.abs().sum() > 0 for n, p in after.items())  # adapters learned

    saved = straight_folder.latest_checkpoint()[1] / "model"
    files = {p.name for p in saved.iterdir()}
    assert "adapter_model.safetensors" in files and "model.safetensors" not in files
    assert json.loads((saved / "adapter_config.json").read_text())["r"] == 4

    # The checkpoint folder loads by itself (base model + adapter) and scores like the trainer.
    reloaded, tokenizer = load_policy(str(saved))
    batch = _batch(tokenizer)
    with torch.no_grad():
        want, _, _ = sequence_logprobs(straight.model, *batch, pad_id=tokenizer.pad_token_id)
        got, _, _ = sequence_logprobs(reloaded, *batch, pad_id=tokenizer.pad_token_id)
    assert torch.allclose(want, got, atol=1e-5)

    partial, partial_folder = make("partial", 1)
    partial.run()
    partial.memory.close()  # as a finished process would
    config = load_config(partial_folder.config(), ["iterations=2"])
    Trainer(config, partial_folder, embedder=embedder).run(resume=True)
    assert _metrics(partial_folder) == _metrics(straight_folder)


@pytest.mark.slow
def test_kl_reference_of_a_lora_policy_is_its_base_not_a_copy(tmp_path, tiny_policy, embedder):
    config = load_config(
        tiny_run_overrides(
            tiny_policy,
            iterations=1,
            **{"policy.lora_rank": 4, "algo.kl_beta": 0.01, "algo.p_memory": 0.0, "eval.every": 0},
        )
    )
    trainer = Trainer(config, RunFolder.create(tmp_path, "kl", config.to_dict()), embedder=embedder)
    assert isinstance(trainer.reference, AdapterFreeView)
    trainer.run()
    assert "update/kl" in trainer.folder.metrics()[-1] or any(
        k.startswith("update/kl") for k in trainer.folder.metrics()[-1]
    )
    no_kl = load_config(tiny_run_overrides(tiny_policy, **{"algo.kl_beta": 0.0}))
    assert Trainer(no_kl, RunFolder.create(tmp_path, "nokl", no_kl.to_dict()), embedder=embedder).reference is None


def _episode(n_steps: int) -> tuple[Episode, list[str]]:
    ep = Episode(
        id="e", task="power-device", variation=0, group=0, rollout_mode="memory-free", description="turn on the lamp"
    )
    after = []
    for t in range(n_steps):
        ep.steps.append(
            StepRecord(
                observation="",
                user_text="",
                tips=[],
                tip_ids=[],
                prompt_ids=[],
                prompt_ids_no_tips=[],
                action=f"go to room{t}",
                executed_action=f"go to room{t}",
                action_ids=[],
                behaviour_logprobs=[],
            )
        )
        after.append(f"you are in room{t} . exits : hall , kitchen")
    return ep, after


def _settings(**policy) -> RolloutSettings:
    """Training-rollout settings of a config with these policy keys (6-token actions)."""
    return RolloutSettings.from_config(
        load_config({"policy": {"max_action_tokens": 6, **policy}}), BuiltinEnv(), train=True
    )


def test_the_prompt_budget_drops_the_oldest_history_first(tiny_policy):
    _, tokenizer = load_policy(str(tiny_policy))
    ep, after = _episode(12)
    settings = _settings(history_steps=12, observation_words=10)
    full_text, full_ids = _fit_user_turn(tokenizer, ep, after, "you are in the hall", settings, 0)
    assert "room0" in full_text and "room11" in full_text
    budget = len(full_ids) - 20
    text, ids = _fit_user_turn(tokenizer, ep, after, "you are in the hall", settings, budget)
    assert len(ids) <= budget and "room11" in text and "room0 " not in text
    # The most history that fits: one more step would not.
    kept = text.count("->")
    longer = step_user_text(ep.description, ep.turns(after), "you are in the hall", kept + 1, 10)
    assert len(encode_chat(tokenizer, step_messages(longer))) > budget

    tips = (["first tip is best", "second tip", "third tip is the worst of all"], ["a", "b", "c"])
    system = step_messages("")[0]["content"]
    room = len(encode_chat(tokenizer, step_messages(text))) + 8  # room for about one tip
    ids, (texts, tip_ids) = _fit_tips(tokenizer, text, tips, system, room)
    assert len(ids) <= room and 1 <= len(texts) < 3  # the lowest-ranked tips went first
    assert texts == tips[0][: len(texts)] and tip_ids == tips[1][: len(texts)]


def test_a_tiny_budget_clips_the_observation_when_no_history_is_left(tiny_policy):
    _, tokenizer = load_policy(str(tiny_policy))
    ep, after = _episode(0)
    settings = _settings(history_steps=3, observation_words=40)
    long_obs = " ".join(["lamp"] * 200)
    _, full = _fit_user_turn(tokenizer, ep, after, long_obs, settings, 0)
    _, clipped = _fit_user_turn(tokenizer, ep, after, long_obs, settings, len(full) - 60)
    assert len(clipped) <= len(full) - 60


@pytest.mark.parametrize(
    "overrides, message",
    [
        (["env.correction=sometimes"], "env.correction"),
        (["env.step_limits=never"], "env.step_limits"),
        (["env.name=alfworld"], "env.name"),
        (["policy.max_sequence_tokens=8"], "must exceed the action and tip"),
        (["policy.lora_rank=-1"], "policy.lora_rank"),
        (["env.workers=0"], "env.workers"),
    ],
)
def test_config_rejects_bad_benchmark_and_model_settings(overrides, message):
    from empo2.config import ConfigError

    with pytest.raises(ConfigError, match=message):
        load_config("builtin", overrides)


def test_a_task_the_environment_does_not_have_is_a_config_error(tmp_path, tiny_policy, embedder):
    from empo2.config import ConfigError

    config = load_config(tiny_run_overrides(tiny_policy, **{"env.tasks": ["power-component"]}))
    with pytest.raises(ConfigError, match="unknown builtin task"):
        Trainer(config, RunFolder.create(tmp_path, "bad", config.to_dict()), embedder=embedder)
