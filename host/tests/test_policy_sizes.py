"""The built-in policy's sizes: `large` is the test of whether the default is too small.

Counted on torch's meta device (shapes, no weights), so no test builds the large policy.
"""

from __future__ import annotations

import pytest
import torch
from transformers import Qwen2ForCausalLM

from empo2.config import BUILTIN_SIZES, ConfigError, builtin_size, load_config
from empo2.policy.builtin import BuiltinRecipe, recipe_for, shipped_policy_path
from empo2.policy.model import TINY_SIZES, load_tokenizer, tiny_config
from empo2.training import trainer


def parameters(size: str) -> int:
    """Parameters of a built-in size with the default recipe's vocabulary (tied embeddings once)."""
    tokenizer = load_tokenizer(str(shipped_policy_path(BuiltinRecipe())))
    with torch.device("meta"):
        model = Qwen2ForCausalLM(tiny_config(tokenizer, size))
    return sum(p.numel() for p in model.parameters())


def test_the_large_policy_has_at_least_four_times_the_default_parameters():
    default, large = parameters("default"), parameters("large")
    assert 1.5e6 < default < 2.5e6  # the ~1.9M the docs state
    assert large >= 4 * default


def test_only_the_large_size_has_a_rate_of_its_own():
    assert recipe_for("default") == BuiltinRecipe() and recipe_for("tiny", seed=3) == BuiltinRecipe(size="tiny", seed=3)
    assert recipe_for("large").lr == BuiltinRecipe().lr / 2  # twice the width, half the rate


def test_the_config_names_the_sizes_the_model_module_builds():
    assert BUILTIN_SIZES == tuple(TINY_SIZES)


@pytest.mark.parametrize(
    "model,size",
    [
        ("builtin", "default"),
        ("builtin:large", "large"),
        ("builtin:tiny", "tiny"),
        ("Qwen/Qwen2.5-7B-Instruct", None),
        ("./builtin", None),
        ("my-builtin:large", None),
    ],
)
def test_policy_model_names_a_builtin_size(model, size):
    assert builtin_size(model) == size


def test_builtin_large_is_a_config_choice_and_an_unknown_size_is_one_sentence():
    assert load_config("builtin", ["policy.model=builtin:large"]).policy.model == "builtin:large"
    with pytest.raises(ConfigError, match="'policy.model' names no built-in size: 'builtin:huge'"):
        load_config("builtin", ["policy.model=builtin:huge"])


def test_resolving_builtin_large_builds_the_large_recipe(monkeypatch, tmp_path):
    asked = []
    monkeypatch.setattr(
        "empo2.policy.builtin.ensure_builtin_policy", lambda recipe, progress=None: asked.append(recipe) or tmp_path
    )
    assert trainer.resolve_model("builtin:large") == str(tmp_path)
    assert trainer.resolve_model("builtin") == str(tmp_path)
    # The large recipe differs from the default in its size and its rate alone: same
    # demonstrations, epochs, batches and schedule.
    assert asked == [BuiltinRecipe(size="large", lr=5e-4), BuiltinRecipe()]
    assert trainer.resolve_model("some/folder") == "some/folder"


def test_build_policy_builds_the_size_it_is_asked_for(monkeypatch, tmp_path, capsys):
    from empo2.cli import main

    asked = []
    monkeypatch.setattr(
        "empo2.policy.builtin.find_builtin_policy", lambda recipe: asked.append(recipe) or tmp_path
    )  # found: nothing is built
    assert main(["build-policy", "--size", "large"]) == 0
    assert asked == [recipe_for("large")] and str(tmp_path) in capsys.readouterr().out


def test_build_policy_lr_is_another_recipe_and_a_bad_rate_is_one_line(monkeypatch, tmp_path, capsys):
    from empo2.cli import main

    asked = []
    monkeypatch.setattr("empo2.policy.builtin.find_builtin_policy", lambda recipe: asked.append(recipe) or tmp_path)
    assert main(["build-policy", "--size", "large", "--lr", "2.5e-4"]) == 0
    assert asked == [BuiltinRecipe(size="large", lr=2.5e-4)]
    assert asked[0].key() != recipe_for("large").key()  # cached beside, never reused
    capsys.readouterr()
    for bad in ("0", "-0.001", "fast"):
        with pytest.raises(SystemExit) as exit_:
            main(["build-policy", "--lr", bad])
        assert exit_.value.code == 2
        assert f"argument --lr: expected a number above zero, got '{bad}'" in capsys.readouterr().err
