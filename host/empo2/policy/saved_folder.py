"""A built policy's folder in the cache: the model and tokenizer saved under a temporary name
with a build report recording every file's sha256, then renamed into place, so a reader never
sees half a folder and a killed build leaves none. Torch-free (the command line imports it)."""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path

from ..atomic import commit_folder

BUILD_REPORT = "empo2_build.json"


def file_digests(folder: Path) -> dict[str, str]:
    """sha256 of every file of a built policy but its build report, by name."""
    return {
        p.name: hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.iterdir())
        if p.is_file() and p.name != BUILD_REPORT
    }


def save_policy_folder(model, tokenizer, report: dict, destination: Path) -> dict:
    """Saves model and tokenizer into `destination` atomically; returns `report` with the
    files' digests, which it writes beside them as the build report."""
    tmp = destination.with_name(destination.name + f".tmp-{os.getpid()}")
    shutil.rmtree(tmp, ignore_errors=True)
    model.save_pretrained(tmp)
    tokenizer.save_pretrained(tmp)
    report["files"] = file_digests(tmp)
    (tmp / BUILD_REPORT).write_text(json.dumps(report, indent=2) + "\n")
    destination.parent.mkdir(parents=True, exist_ok=True)
    shutil.rmtree(destination, ignore_errors=True)
    commit_folder(tmp, destination)
    return report


def build_once(path: Path, build: Callable[[Path], object]) -> Path:
    """`path`, built first by `build(path)` when it holds no built policy yet. Processes that need
    the same folder at once (two test workers, two editor windows) build it once: the builder
    holds a lock file beside the folder (released when the file closes, also by a killed
    process), and a waiter finds the folder built when it gets the lock. (A build replaces the
    folder, so two builders racing would remove each other's result from under its readers.)"""
    if (path / BUILD_REPORT).is_file():
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path.with_name(f".{path.name}.lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (path / BUILD_REPORT).is_file():
            build(path)
    return path


PROMPT_SHAPE_KEYS = ("history_steps", "observation_words")


def recipe_prompt_shape(folder: Path) -> dict[str, int]:
    """The prompt shape (`policy.history_steps`, `policy.observation_words`) the policy in
    `folder` was built on; empty when the folder records no recipe (a run's checkpoint, a model
    from elsewhere)."""
    try:
        recipe = json.loads((folder / BUILD_REPORT).read_text()).get("recipe") or {}
    except (OSError, ValueError, AttributeError):
        return {}
    return {key: recipe[key] for key in PROMPT_SHAPE_KEYS if key in recipe}


def prompt_shape_overrides(folder: Path) -> list[str]:
    """Config overrides that give a run the prompt shape its policy was built on."""
    return [f"policy.{key}={value}" for key, value in recipe_prompt_shape(folder).items()]


def prompt_shape_difference(folder: Path, history_steps: int, observation_words: int) -> str | None:
    """One sentence when the policy in `folder` was built on prompts of another shape than a
    run's `policy.history_steps` and `policy.observation_words` (a policy reads best the
    prompts it learned from: cut at other places, a room's exits or items go missing or come
    where it never saw them); None when they agree or the folder records no recipe."""
    recipe = recipe_prompt_shape(folder)
    run = {"history_steps": history_steps, "observation_words": observation_words}
    differs = [
        f"policy.{key} {recipe[key]} (this run: {value})"
        for key, value in run.items()
        if key in recipe and recipe[key] != value
    ]
    if not differs:
        return None
    return (
        f"the policy {folder.name} was built on prompts with {' and '.join(differs)}; "
        f"set the run's alike unless the difference is what you test"
    )
