"""What a run's `policy.model` can name on this host: the models a client offers (the protocol's
`policy.list`, the extension's New Training Run), and the check that refuses a local folder
holding no model before a run starts rather than when its trainer loads it.

Torch-free at import: the host answers `policy.list` and checks a config without loading a model.
"""

from __future__ import annotations

import importlib.metadata
import re
from pathlib import Path

from ..config import builtin_size
from .chat_warm_start import ChatWarmStartRecipe, warm_start_path
from .pretrained import PACKAGED_MODELS, PackagedModel, find_packaged_policy
from .saved_folder import BUILD_REPORT, prompt_shape_overrides

# owner/name or name, as on the Hugging Face Hub (model.py loads either).
HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]*(/[\w.-]+)?$")
# What makes a folder a Hugging Face model: a model's config, or a saved LoRA adapter's.
MODEL_FILES = ("config.json", "adapter_config.json")


def model_folder_problem(model: str, named: str = "policy.model") -> str | None:
    """One sentence when `model` (a policy.model, or what the option `named` gave) names a local
    folder that cannot hold a model; None for the built-in and packaged names, a hub id, and a
    folder with a model's config. A hub id is only checked when it is downloaded."""
    if builtin_size(model) is not None or model in PACKAGED_MODELS:
        return None
    path = Path(model)  # not expanded: the loader reads '~' literally too
    if HUB_ID.match(model) and not model.startswith(".") and not path.exists():
        return None
    shown = model[:300]
    if path.is_file():
        return f"{named} '{shown}' is a file; it names a model folder (config.json and weights) or a hub id."
    if not path.is_dir():
        return f"{named} names no folder: there is nothing at '{shown}'."
    if not any((path / name).is_file() for name in MODEL_FILES):
        return (
            f"{named} '{shown}' is not a Hugging Face model folder: it holds no "
            "config.json (save one with save_pretrained)."
        )
    return None


def policy_choices() -> list[dict]:
    """The models to offer, each with the `policy.model` to give, whether it is built now, the
    overrides it should train with, and why it cannot be used here (None when it can)."""
    from .builtin import find_builtin_policy, recipe_for  # loads torch: only when asked

    rows = [
        _row(
            "builtin",
            "Built-in policy",
            "the small word-level policy of the built-in worlds; trains on a CPU",
            built=find_builtin_policy(recipe_for()) is not None,
        )
    ]
    for model in PACKAGED_MODELS.values():
        converted = find_packaged_policy(model.name) is not None
        rows.append(
            _row(
                model.name,
                model.title,
                f"from the Python package {model.package} {model.version}; "
                + ("converted in the cache" if converted else "converted on its first run (about a minute)"),
                built=converted,
                error=None if converted else _package_problem(model),
            )
        )
        warm = warm_start_path(model.name, ChatWarmStartRecipe())
        if (warm / BUILD_REPORT).is_file():
            rows.append(
                _row(
                    str(warm),
                    f"{model.title}, warm start",
                    "fine-tuned on the built-in worlds' demonstrations "
                    f"(build-policy --model {model.name} --warm-start)",
                    built=True,
                    overrides=prompt_shape_overrides(warm),
                )
            )
    return rows


def _row(
    model: str, title: str, description: str, built: bool, error: str | None = None, overrides: list[str] | None = None
) -> dict:
    return {
        "model": model,
        "title": title,
        "description": description,
        "built": built,
        "overrides": overrides or [],
        "error": error,
    }


def _package_problem(model: PackagedModel) -> str | None:
    """Why the package carrying an unconverted model cannot be read (pretrained.py checks the
    file's digest when it converts)."""
    try:
        version = importlib.metadata.version(model.package)
    except importlib.metadata.PackageNotFoundError:
        return f"the Python package {model.package} {model.version} is not installed."
    if version != model.version:
        return f"the installed package {model.package} is {version}, not {model.version}."
    return None
