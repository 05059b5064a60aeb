"""Configuration: presets, overrides, and one clear sentence for every mistake."""

from __future__ import annotations

import json

import pytest

from empo2.config import ConfigError, load_config, presets


def test_presets_load_and_grpo_is_p_zero():
    assert {"builtin", "builtin-grpo", "builtin-smoke", "builtin-bench"} <= set(presets())
    assert load_config("builtin").algo.p_memory == 0.25
    assert load_config("builtin-grpo").algo.p_memory == 0.0


def test_grpo_preset_is_the_papers_grpo():
    """A fixed defect: the GRPO baseline kept the novelty reward and the low-probability
    mask. The paper's GRPO is p = 0, no intrinsic reward, no mask, and (nothing reads them) no
    tips written; the preset is the builtin preset with the bench's GRPO arm applied."""
    from empo2.bench.arms import ARMS

    grpo = load_config("builtin-grpo")
    assert (grpo.algo.p_memory, grpo.algo.intrinsic, grpo.algo.low_prob_mask) == (0.0, "off", "off")
    assert grpo.memory.write_tips == "auto"
    assert grpo.to_dict() == load_config("builtin", ARMS["GRPO"]).to_dict()
    novelty = load_config("builtin", ARMS["GRPO + novelty"])
    assert (novelty.algo.p_memory, novelty.algo.intrinsic, novelty.algo.low_prob_mask) == (0.0, "paper", "off")


def test_defaults_are_the_papers():
    algo = load_config(None).algo
    assert (algo.p_memory, algo.q_off_policy, algo.clip_low, algo.clip_high, algo.dual_clip_c) == (
        0.25,
        2 / 3,
        0.2,
        0.3,
        10.0,
    )
    assert (algo.low_prob_mask, algo.mask_log_delta, algo.off_policy_old_logprob) == ("token", -5.0, "with_tips")
    assert load_config(None).memory.similarity_threshold == 0.5 and load_config(None).memory.top_k == 10


def test_overrides_are_typed():
    config = load_config(
        "builtin",
        ["algo.p_memory=0", 'env.tasks=["grow-plant"]', "algo.low_prob_mask=step", "iterations=7", "policy.model=/x"],
    )
    assert config.algo.p_memory == 0.0 and isinstance(config.algo.p_memory, float)
    assert config.env.tasks == ["grow-plant"] and config.iterations == 7
    assert config.algo.low_prob_mask == "step" and config.policy.model == "/x"


@pytest.mark.parametrize(
    "overrides, message",
    [
        (["algo.pmemory=0.3"], "unknown config key 'algo.pmemory'"),
        (["iterations=many"], "'iterations' must be an integer"),
        (["algo.p_memory=1.5"], "probability"),
        (["algo.low_prob_mask=sometimes"], "must be one of token, step, off"),
        (["env.correct_actions=1"], "true or false"),
        (["nonsense"], "must look like key=value"),
        (["algo.group_size=1"], "at least 2"),
        (["algo.minibatch_prompts=-1"], "'algo.minibatch_prompts' must be at least 0"),
        (["algo.memory_contrast=quarter"], "must be one of off, half"),
        (["algo.memory_contrast=half", "algo.intrinsic=reference"], "'half' only with algo.intrinsic"),
    ],
)
def test_mistakes_are_one_sentence(overrides, message):
    with pytest.raises(ConfigError, match=message) as caught:
        load_config("builtin", overrides)
    assert "\n" not in str(caught.value)


def test_files(tmp_path):
    good = tmp_path / "good.json"
    good.write_text(json.dumps({"iterations": 3, "algo": {"p_memory": 0.5}}))
    assert load_config(str(good)).algo.p_memory == 0.5
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(ConfigError, match="not valid JSON"):
        load_config(str(bad))
    with pytest.raises(ConfigError, match="no preset or config file"):
        load_config(str(tmp_path / "missing.json"))
    nested = tmp_path / "nested.json"
    nested.write_text(json.dumps({"algo": {"lr": "fast"}}))
    with pytest.raises(ConfigError, match="'algo.lr' must be a float"):
        load_config(str(nested))
