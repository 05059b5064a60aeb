"""End-to-end training on CPU with the tiny built-in policy and the real embedder."""

from __future__ import annotations

import json

import pytest
import torch

from conftest import tiny_run_overrides
from empo2.config import load_config
from empo2.run_folder.folder import RunFolder
from empo2.training.trainer import Trainer

pytestmark = pytest.mark.slow


def make_trainer(tmp_path, tiny_policy, embedder, name="run", **overrides):
    config = load_config(tiny_run_overrides(tiny_policy, **overrides))
    config.root, config.name = str(tmp_path), name
    folder = RunFolder.create(tmp_path, name, config.to_dict())
    return Trainer(config, folder, embedder=embedder), folder


def test_off_policy_run_writes_a_complete_run_folder(tmp_path, tiny_policy, embedder):
    """p = q = 1: every iteration rolls out with memory and trains off-policy."""
    trainer, folder = make_trainer(tmp_path, tiny_policy, embedder)
    trainer.run()

    assert folder.state()["state"] == "finished" and folder.state()["iteration"] == 3
    assert json.loads((folder.path / "config.json").read_text())["algo"]["p_memory"] == 1.0
    metrics = folder.metrics()
    assert [m["iteration"] for m in metrics] == [1, 2, 3]
    for m in metrics:
        assert m["rollout_mode"] == "memory" and m["update_mode"] == "off-policy"
        for key in (
            "rollout/memory/return",
            "rollout/memory/success",
            "memory/tips",
            "memory/retrieval_hits",
            "update/masked_fraction",
            "update/ratio_mean",
            "update/ratio_max",
            "update/clip_fraction",
            "update/entropy",
            "update/grad_norm",
            "update/approx_kl_old",
            "reward/intrinsic",
            "time/rollout",
            "time/update",
            "throughput/rollout_tokens_per_s",
            "memory/success_tip_share",
            "update/off_policy/masked_fraction",
            "update/off_policy/ratio_mean",
            "update/off_policy/ratio_max",
            "reward/intrinsic_advantage_share",
            "reward/flat_group_share",
        ):
            assert key in m, key
    assert "eval/memory_free/success" in metrics[-1] and "eval/memory/success" in metrics[-1]
    # Iteration 1 wrote tips; later iterations retrieve them into the prompt.
    assert metrics[0]["memory/tips"] > 0 and metrics[-1]["memory/retrieval_hits"] > 0
    # Tips removed from the numerator but kept in the denominator: ratios leave 1.
    assert any(abs(m["update/ratio_max"] - 1) > 1e-3 or abs(m["update/ratio_min"] - 1) > 1e-3 for m in metrics[1:])

    summaries = list(folder.trajectory_summaries())
    assert len(summaries) == 3 * 2 * 2
    episodes = [folder.trajectory(s["id"]) for s in summaries]
    assert all(e["rollout_mode"] == "memory" and e["update_mode"] == "off-policy" for e in episodes)
    assert all(e["description"] for e in episodes) and any(e["tip"] for e in episodes)
    with_tips = [s for e in episodes if e["iteration"] > 1 for s in e["steps"] if s["tips"]]
    assert with_tips, "memory-mode episodes after iteration 1 show tips"
    for step in (s for e in episodes for s in e["steps"]):
        assert len(step["action_ids"]) == len(step["behaviour_logprobs"]) > 0
        assert all(lp <= 0 for lp in step["behaviour_logprobs"])
        assert step["prompt"].startswith(step["prompt_no_tips"])
        assert {
            "observation",
            "action",
            "reward",
            "intrinsic",
            "prompt_ids",
            "prompt_ids_no_tips",
            "next_observation",
        } <= set(step)
    for step in with_tips:
        assert step["prompt"].endswith("</tip>") and step["prompt_ids"] != step["prompt_ids_no_tips"]

    tips, total = trainer.memory.list_tips()
    assert total > 0
    provenance = tips[0].provenance
    assert provenance["run"] == "run" and provenance["iteration"] >= 1 and "episode" in provenance
    assert folder.latest_checkpoint()[0] == 3


def test_memory_contrast_half_splits_each_group_under_one_baseline(tmp_path, tiny_policy, embedder, monkeypatch):
    """algo.memory_contrast=half: in a memory iteration the first half of each group plays with
    tips and the rest without, and the update's advantage sees each group whole."""
    import empo2.training.update as update_module

    seen = []
    real = update_module.group_advantages

    def spy(returns, group_index, **kwargs):
        seen.append(group_index.tolist())
        return real(returns, group_index, **kwargs)

    monkeypatch.setattr(update_module, "group_advantages", spy)
    trainer, folder = make_trainer(
        tmp_path,
        tiny_policy,
        embedder,
        iterations=2,
        **{"algo.group_size": 4, "algo.memory_contrast": "half", "eval.every": 0},
    )
    trainer.run()
    assert seen == [[0, 0, 0, 0, 1, 1, 1, 1]] * 2  # one baseline per group of 4, both halves in it
    episodes = [folder.trajectory(s["id"]) for s in folder.trajectory_summaries()]
    for episode in episodes:
        k = int(episode["id"][-4:]) % 4
        assert episode["rollout_mode"] == ("memory" if k < 2 else "memory-free")
        assert episode["update_mode"] == "off-policy"
        if k >= 2:
            assert all(not s["tips"] and s["prompt_ids"] == s["prompt_ids_no_tips"] for s in episode["steps"])
    assert any(s["tips"] for e in episodes if e["iteration"] == 2 for s in e["steps"])
    for m in folder.metrics():
        assert m["rollout_mode"] == "memory"
        assert {"rollout/memory/success", "rollout/memory_free/success"} <= set(m)


def test_every_trainable_parameter_learns(tmp_path, tiny_policy, embedder):
    trainer, _ = make_trainer(
        tmp_path,
        tiny_policy,
        embedder,
        iterations=1,
        **{"algo.p_memory": 0.0, "algo.group_size": 4, "algo.minibatches": 1, "algo.lr": 1e-3, "eval.every": 0},
    )
    before = {n: p.detach().clone() for n, p in trainer.model.named_parameters() if p.requires_grad}
    trainer.run()
    metrics = trainer.folder.metrics()[-1]
    assert metrics["update_mode"] == "on-policy"
    assert all(torch.isfinite(torch.tensor(v)) for k, v in metrics.items() if k.startswith("update/"))
    unchanged = [
        n for n, p in trainer.model.named_parameters() if p.requires_grad and torch.equal(p.detach(), before[n])
    ]
    assert not unchanged, unchanged


@pytest.mark.parametrize("write_tips", ["auto", "always"])
def test_grpo_never_touches_memory_in_rollouts(tmp_path, tiny_policy, embedder, write_tips):
    """With p = 0 no rollout reads a tip, so by default (auto) the policy writes none: reflection
    is skipped (the GRPO baseline used to write them); memory.write_tips=always writes them anyway."""
    trainer, folder = make_trainer(
        tmp_path,
        tiny_policy,
        embedder,
        iterations=2,
        **{"algo.p_memory": 0.0, "eval.every": 0, "memory.write_tips": write_tips},
    )
    trainer.run()
    written = []
    for summary in folder.trajectory_summaries():
        episode = folder.trajectory(summary["id"])
        assert episode["rollout_mode"] == "memory-free" and episode["update_mode"] == "on-policy"
        assert all(not s["tips"] for s in episode["steps"])
        written.append(bool(episode["tip"]))
    # With `always` every episode reflects, but a sampled tip can be empty (eos drawn first).
    assert any(written) == (write_tips == "always")
    assert (trainer.memory.count() > 0) == (write_tips == "always")


@pytest.mark.parametrize("variant", ["off", "reference"])
def test_intrinsic_variant_trains_memory_free_iterations(tmp_path, tiny_policy, embedder, variant):
    """A fixed defect: with algo.intrinsic=off or =reference every memory-free iteration
    raised (the rollout passed neither embeddings nor retrieval counts). Both pay 0 there."""
    trainer, folder = make_trainer(
        tmp_path,
        tiny_policy,
        embedder,
        iterations=2,
        **{"algo.p_memory": 0.0, "algo.intrinsic": variant, "eval.every": 0},
    )
    trainer.run()
    assert folder.state()["state"] == "finished"
    assert [m["reward/intrinsic"] for m in folder.metrics()] == [0.0, 0.0]


@pytest.mark.parametrize("writer,lora_rank", [("policy", 0), ("initial", 0), ("initial", 4)])
def test_tips_are_written_by_the_configured_writer(tmp_path, tiny_policy, embedder, writer, lora_rank):
    """memory.tip_writer: after updates that moved the policy, an iteration's tips are exactly
    what the chosen model writes from the same episodes with the same per-episode generators:
    the trained policy ('policy', the paper) or the frozen warm start ('initial'; under LoRA the
    base with the adapters switched off)."""
    from empo2.policy.model import load_policy
    from empo2.training.rollout import episode_generator, roll_out, write_tips
    from empo2.training.trainer import ROLLOUT_STREAM

    trainer, _ = make_trainer(
        tmp_path,
        tiny_policy,
        embedder,
        iterations=2,
        **{"algo.lr": 1e-2, "eval.every": 0, "memory.tip_writer": writer, "policy.lora_rank": lora_rank},
    )
    trainer.run()
    tasks = [("power-device", 0), ("grow-plant", 0)]
    played = trainer.play(99, tasks, memory_mode=False)[0]

    def tips_of(model) -> list[str]:  # play's rollout again, then `model` reflects
        episodes = [type(e)(e.id, e.task, e.variation, e.group, e.rollout_mode) for e in played]
        samplers = [episode_generator(trainer.config.seed, ROLLOUT_STREAM, 99, k) for k in range(len(episodes))]
        after = roll_out(
            trainer.envs.take(len(episodes)),
            episodes,
            trainer.model,
            trainer.tokenizer,
            trainer._settings(train=True),
            samplers,
            None,
        )
        assert [e.final_score for e in episodes] == [e.final_score for e in played]
        write_tips(
            episodes,
            after,
            model,
            trainer.tokenizer,
            trainer._settings(train=True),
            trainer.config.policy.max_tip_tokens,
            samplers,
        )
        return [e.tip for e in episodes]

    warm_start = load_policy(str(tiny_policy))[0].eval()
    by_policy, by_warm_start = tips_of(trainer.model), tips_of(warm_start)
    assert by_policy != by_warm_start  # the updates moved the writer: the test can tell them apart
    assert [e.tip for e in played] == (by_policy if writer == "policy" else by_warm_start)
    trainer.close()
