"""A supervised warm start of a chat model on the demonstrations an environment ships.

    empo2-host build-policy --model smollm2-135m-instruct --warm-start --env lockbox
    empo2-host train env.name=lockbox policy.model=<the folder it prints>

Zero-shot, a small chat model answers a new environment in prose, and the built-in policy in the
built-in worlds' words. An environment that declares demonstrations (policy/env_demos.py,
docs/environments.md) gets a model that acts in it: the same imitation as the built-in worlds'
chat warm start (chat_warm_start.fine_tune: cross-entropy on the answer's tokens in the model's
own chat template, warmup then cosine), on every demonstrated step rendered as the prompt a run
on that environment builds (its instructions, the default prompt shape) and every tip as the
reflection prompt's answer.

The model is a packaged model's name (converted first when the cache lacks it) or a local
Hugging Face folder. The result is cached under policies/ by a hash of its recipe, which holds
the model's identity (a packaged model's digest; a folder's path and its files' sizes and
times), the environment's name and the demonstrations file's sha256: a changed file or model is
another recipe, built anew.
"""

from __future__ import annotations

import hashlib
import json
import re
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from ..cache import cache_root
from ..config import EnvConfig, PolicyConfig
from .chat_warm_start import Progress, fine_tune
from .env_demos import demonstration_examples, demonstrations_file, file_digest, load_demonstrations
from .pretrained import PACKAGED_MODELS, ensure_packaged_policy, packaged_policy_path
from .saved_folder import BUILD_REPORT, build_once, save_policy_folder

RECIPE_VERSION = 1


@dataclass
class EnvWarmStartRecipe:
    """Everything that determines the warm-started weights."""

    model: str  # a packaged model's name, or a folder's resolved path
    model_fingerprint: str  # a packaged model's file digest; a folder's files' sizes and times
    env: str  # env.name
    demonstrations_sha256: str
    # The chat warm start's rate and schedule; two passes over the example's 381 examples (96
    # optimizer steps of 8) took 10.7 minutes on 2 shared CPU cores (examples/lockbox-env).
    epochs: int = 2
    batch_size: int = 8
    lr: float = 1e-4
    warmup: float = 0.1
    seed: int = 0
    # The prompt shape of a run with the default config, so the run reads what it learned from.
    history_steps: int = PolicyConfig.history_steps
    observation_words: int = PolicyConfig.observation_words
    reflection_observation_words: int = PolicyConfig.reflection_observation_words

    def key(self) -> str:
        blob = json.dumps({"v": RECIPE_VERSION, **asdict(self)}, sort_keys=True).encode()
        return hashlib.sha256(blob).hexdigest()[:12]


def model_identity(model: str) -> tuple[str, str, str]:
    """(how the recipe names the model, its fingerprint, a short label for the folder name) of a
    packaged model's name or a local model folder; a FileNotFoundError (one sentence) else."""
    if model in PACKAGED_MODELS:
        packaged = PACKAGED_MODELS[model]
        return model, packaged.sha256, packaged_policy_path(packaged).name
    folder = Path(model).expanduser()
    if not folder.is_dir():
        raise FileNotFoundError(
            f"--model {model!r} is neither a packaged model ({', '.join(PACKAGED_MODELS)}) nor a local model folder"
        )
    folder = folder.resolve()
    stats = sorted((p.name, p.stat().st_size, p.stat().st_mtime_ns) for p in folder.iterdir() if p.is_file())
    fingerprint = hashlib.sha256(json.dumps(stats).encode()).hexdigest()
    return str(folder), fingerprint, f"{folder.name}-{fingerprint[:8]}"


def env_warm_start_recipe(model: str, env: str, seed: int = 0) -> tuple[EnvWarmStartRecipe, Path]:
    """The recipe of `model` warm-started on environment `env`'s demonstrations and the cache
    folder it is built into; the environment is made once to find its file, which is checked
    here (an EnvironmentFault or ConfigError of one sentence before any model loads)."""
    from ..config import BUILTIN_ENVS, ConfigError
    from ..envs.registry import make_env

    if env in BUILTIN_ENVS:
        raise ConfigError(
            f"environment {env!r} is built in and ships no demonstrations; without --env, "
            "--warm-start fine-tunes on the built-in worlds' own"
        )
    name, fingerprint, label = model_identity(model)
    environment = make_env(EnvConfig(name=env))
    try:
        path = demonstrations_file(environment, env)
    finally:
        _close(environment)
    load_demonstrations(path, env)
    recipe = EnvWarmStartRecipe(name, fingerprint, env, file_digest(path), seed=seed)
    slug = re.sub(r"[^A-Za-z0-9._-]+", "_", env)
    return recipe, cache_root() / "policies" / f"{label}-{slug}-sft-{recipe.key()}"


def build_env_warm_start(recipe: EnvWarmStartRecipe, destination: Path, progress: Progress | None = None) -> dict:
    """Fine-tunes the model on the environment's demonstrations into `destination` (atomically);
    returns the build report."""
    from ..envs.registry import make_env
    from .prompting import system_prompt_for

    started = time.time()
    source = ensure_packaged_policy(recipe.model) if recipe.model in PACKAGED_MODELS else Path(recipe.model)
    environment = make_env(EnvConfig(name=recipe.env))
    try:
        path = demonstrations_file(environment, recipe.env)
        system = system_prompt_for(environment)
    finally:
        _close(environment)
    if file_digest(path) != recipe.demonstrations_sha256:
        raise RuntimeError(f"the demonstrations file {path} changed while the warm start was being prepared")
    episodes = load_demonstrations(path, recipe.env)
    examples = demonstration_examples(
        episodes, system, recipe.history_steps, recipe.observation_words, recipe.reflection_observation_words
    )
    model, tokenizer, report = fine_tune(source, examples, recipe, progress)
    report = {
        "model": recipe.model,
        "source": source.name,
        "env": recipe.env,
        "demonstrations": {
            "file": path.name,
            "episodes": len(episodes),
            "steps": sum(len(e.actions) for e in episodes),
            "tips": sum(bool(e.tip) for e in episodes),
        },
        "recipe": asdict(recipe),
        "recipe_key": recipe.key(),
        **report,
        "seconds": round(time.time() - started, 1),
    }
    return save_policy_folder(model, tokenizer, report, destination)


def ensure_env_warm_start(recipe: EnvWarmStartRecipe, path: Path, progress: Progress | None = None) -> Path:
    """The warm-started folder, built first when the cache lacks it (one builder at a time)."""
    return build_once(path, lambda destination: build_env_warm_start(recipe, destination, progress))


def is_built(path: Path) -> bool:
    return (path / BUILD_REPORT).is_file()


def _close(environment) -> None:
    close = getattr(environment, "close", None)
    if callable(close):
        close()
