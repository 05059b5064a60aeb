"""The built-in policy as the trainer loads it: tokenizer, vocabulary, determinism."""

from __future__ import annotations

import json
import random

import torch

from empo2.envs.builtin.env import BuiltinEnv
from empo2.envs.builtin.tasks import TASK_KINDS
from empo2.policy.builtin import (
    BUILD_REPORT,
    SHIPPED_DIR,
    BuiltinRecipe,
    build_builtin_policy,
    builtin_policy_path,
    file_digests,
    find_builtin_policy,
    shipped_policy_path,
)
from empo2.policy.model import load_policy
from empo2.policy.prompting import step_messages
from empo2.policy.tokenizer import encode_chat


def test_loaded_tokenizer_is_the_word_tokenizer(tiny_policy):
    """AutoTokenizer would pick Qwen2Tokenizer from config.json and mangle every prompt."""
    _, tokenizer = load_policy(str(tiny_policy))
    text = "go to kitchen , open the cupboard . <tip> score 100 </tip>"
    ids = tokenizer.encode(text, add_special_tokens=False)
    assert tokenizer.decode(ids) == text
    assert len(ids) == len(text.split())


def test_every_word_of_every_world_the_warm_start_knows_is_in_the_vocabulary(tiny_policy):
    # A kind added after the shipped weights (in_warm_start=False) is left out of the recipe's
    # vocabulary, so the shipped weights stay the ones their recipe builds.
    _, tokenizer = load_policy(str(tiny_policy))
    env, rng = BuiltinEnv(), random.Random(0)
    for task in (name for name, kind in TASK_KINDS.items() if kind.in_warm_start):
        for variation in (0, 4, 100, 119):
            obs, info = env.reset(task, variation)
            texts = [obs, info.task_description]
            done = False
            while not done:
                action = rng.choice(info.valid_actions)
                obs, _, done, info = env.step(action)
                texts += [action, obs]
            ids = encode_chat(tokenizer, step_messages(" ".join(texts)))
            assert tokenizer.unk_token_id not in ids, task


def test_the_build_is_deterministic(tmp_path):
    recipe = BuiltinRecipe(size="tiny", epochs=1, seed=3, episodes={"habit": 4, "tip-success": 4})
    a = build_builtin_policy(recipe, tmp_path / "a")
    b = build_builtin_policy(recipe, tmp_path / "b")
    assert a["epoch_losses"] == b["epoch_losses"]
    model_a, _ = load_policy(str(tmp_path / "a"))
    model_b, _ = load_policy(str(tmp_path / "b"))
    for (name, pa), (_, pb) in zip(model_a.named_parameters(), model_b.named_parameters()):
        assert torch.equal(pa, pb), name


def test_a_build_records_the_digest_of_every_file_it_wrote(tmp_path):
    recipe = BuiltinRecipe(size="tiny", epochs=1, seed=3, episodes={"habit": 4, "tip-success": 4})
    report = build_builtin_policy(recipe, tmp_path / "a")
    assert report["files"] == file_digests(tmp_path / "a")
    assert {"model.safetensors", "config.json"} <= set(report["files"])
    assert json.loads((tmp_path / "a" / BUILD_REPORT).read_text())["files"] == report["files"]


def test_the_shipped_default_policy_is_the_one_its_recipe_builds():
    """The package ships the default recipe's weights (a fresh clone trains without the build):
    the folder is named by the current recipe's key, its report records that recipe, and every
    file is the one the build wrote (`empo2-host build-policy --force` reproduces it)."""
    recipe = BuiltinRecipe()
    shipped = shipped_policy_path(recipe)
    assert shipped is not None, f"no weights shipped for the default recipe in {SHIPPED_DIR}"
    report = json.loads((shipped / BUILD_REPORT).read_text())
    assert report["recipe_key"] == recipe.key() and report["recipe"] == recipe.fields()
    assert report["files"] == file_digests(shipped)
    assert sorted(p.name for p in SHIPPED_DIR.iterdir()) == [shipped.name]  # no stale recipe left


def test_the_cache_wins_over_the_shipped_copy_and_neither_means_a_build(tmp_path, monkeypatch):
    monkeypatch.setenv("EMPO2_CACHE_DIR", str(tmp_path))
    recipe = BuiltinRecipe()
    assert find_builtin_policy(recipe) == shipped_policy_path(recipe) is not None
    local = builtin_policy_path(recipe)
    local.mkdir(parents=True)
    (local / BUILD_REPORT).write_text("{}")
    assert find_builtin_policy(recipe) == local
    assert find_builtin_policy(BuiltinRecipe(seed=99)) is None  # not shipped, not built


def test_a_run_whose_prompts_differ_from_its_policys_training_says_so(tiny_policy, tmp_path, caplog, embedder):
    """The tiny policy learned from prompts with 10 words of each past observation (30 of the
    current one): a run that cuts them elsewhere is warned, one that matches is not."""
    from conftest import tiny_run_overrides
    from empo2.config import load_config
    from empo2.run_folder.folder import RunFolder
    from empo2.training.trainer import Trainer

    recipe = json.loads((tiny_policy / BUILD_REPORT).read_text())["recipe"]
    assert (recipe["history_steps"], recipe["observation_words"]) == (3, 10)
    for name, words in (("alike", 10), ("other", 17)):
        config = load_config(tiny_run_overrides(tiny_policy, **{"policy.observation_words": words}))
        caplog.clear()
        Trainer(config, RunFolder.create(tmp_path, name, config.to_dict()), embedder=embedder)
        warned = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
        if words == 10:
            assert warned == []
        else:
            assert warned == [
                f"the policy {tiny_policy.name} was built on prompts with "
                "policy.observation_words 10 (this run: 17); set the run's alike "
                "unless the difference is what you test"
            ]
