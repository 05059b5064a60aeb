"""The paper's ScienceWorld setup with a real pretrained chat model, on CPU.

The `scienceworld-power-component` preset (the paper's task, its instructions, action
correction, per-task step limits) with SmolLM2-135M-Instruct from its PyPI wheel in place of
Qwen2.5-7B, shrunk to fit a test: two rollouts of two steps, short tips, LoRA adapters, one
process on the CPU (the preset's fsdp2 needs GPUs), two iterations on one variation so that
the tips of the first are read in the second. The simulator is the local ScienceWorld jar.
"""

from __future__ import annotations

import pytest
from transformers import AutoTokenizer

from empo2.config import load_config

pytestmark = pytest.mark.slow

# What differs from the paper's preset, and why: the rest (task, instructions, correction,
# memory, the loss's clipping) is the preset's own.
SHRUNK = [
    "iterations=2",
    "checkpoint_every=2",
    "env.train_variations=[0]",  # tips written, then read
    "policy.model=smollm2-135m-instruct",
    "policy.dtype=float32",
    "policy.device=cpu",
    "policy.lora_rank=8",  # a 135M model's Adam state is 1 GB in full; adapters are a few MB
    "policy.gradient_checkpointing=false",
    "policy.generation_batch=4",
    "policy.max_action_tokens=8",
    "policy.max_tip_tokens=16",
    "policy.max_sequence_tokens=768",
    "policy.history_steps=2",
    "policy.observation_words=40",
    "env.max_steps=2",
    "env.step_limits=fixed",
    "env.workers=2",
    "algo.batch_tasks=1",
    "algo.group_size=2",
    "algo.p_memory=1.0",
    "algo.q_off_policy=1.0",
    "algo.micro_batch=2",
    "algo.lr=1e-5",
    "eval.every=0",
    "dist.strategy=ddp",  # one process: no process group
]


def test_one_empo2_iteration_of_the_paper_s_scienceworld_setup_with_smollm2(tmp_path, smollm2, embedder):
    from empo2.run_folder.folder import RunFolder
    from empo2.training.trainer import Trainer

    config = load_config("scienceworld-power-component", SHRUNK)
    assert config.env.tasks == ["power-component"] and config.env.correction == "unparsed"
    folder = RunFolder.create(tmp_path, "sw-smollm2", config.to_dict())
    trainer = Trainer(config, folder, embedder=embedder)
    try:
        assert trainer.model_path == str(smollm2)
        trainer.run()
    finally:
        trainer.close()

    assert folder.state()["state"] == "finished"
    metrics = folder.metrics()
    assert [(m["rollout_mode"], m["update_mode"]) for m in metrics] == [("memory", "off-policy")] * 2
    assert all(m["update/off_policy/optimizer_steps"] >= 1 for m in metrics)
    tokenizer = AutoTokenizer.from_pretrained(smollm2)
    episodes = [folder.trajectory(s["id"]) for s in folder.trajectory_summaries()]
    assert len(episodes) == 4
    written = {e["tip"].strip() for e in episodes if e["iteration"] == 1}
    for episode in episodes:
        assert episode["task"] == "power-component"
        assert episode["tip"].strip()  # the model's own reflection, stored as a tip
        for step in episode["steps"]:
            # A chat model's turn: the paper's ScienceWorld instructions as the system message,
            # the observation as the user's, the action as the assistant's reply.
            rendered = tokenizer.decode(step["prompt_ids"])
            system, user = rendered.split("<|im_end|>\n")[:2]
            assert system.startswith("<|im_start|>system\n") and "focus on" in system
            assert user.startswith("<|im_start|>user\n") and step["prompt"].split(" <tip>")[0] in user
            assert rendered.endswith("<|im_start|>assistant\n")
            # The off-policy update scores the action under the same turn without the tips.
            assert "<tip>" not in tokenizer.decode(step["prompt_ids_no_tips"])
            assert len(step["prompt_ids"]) <= config.policy.max_sequence_tokens
    # Iteration 2's turns carry tips the model wrote in iteration 1, in its own words.
    later = [s for e in episodes if e["iteration"] == 2 for s in e["steps"]]
    assert later and all(s["tip_texts"] for s in later)
    for step in later:
        assert set(step["tip_texts"]) <= written and "<tip>" in tokenizer.decode(step["prompt_ids"])
