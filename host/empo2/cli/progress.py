"""The progress a command draws on stderr: tqdm bars (off with EMPO2_NO_PROGRESS=1), the
callbacks that move them for a policy's build and a warm start, and the built-in policy found
or built with its bar."""

from __future__ import annotations

import os
import sys


def progress_bar(description: str, total: int | None = None, unit: str = "it", disable: bool = False):
    from tqdm import tqdm

    return tqdm(
        total=total,
        desc=description,
        unit=unit,
        file=sys.stderr,
        dynamic_ncols=True,
        disable=disable or os.environ.get("EMPO2_NO_PROGRESS") == "1",
    )


def imitation_progress(bar, epochs: int):
    """Progress of a built-in policy's build: one bar over every epoch (so tqdm's ETA is the
    whole build's), saying which epoch of how many, with the latest loss."""

    def update(done: int, total: int, epoch: int, loss: float) -> None:
        if bar.total != total:
            bar.reset(total=total)
        bar.set_description(f"building the built-in policy (epoch {epoch + 1}/{epochs})", refresh=False)
        bar.update(done - bar.n)
        bar.set_postfix(loss=f"{loss:.3f}", refresh=False)

    return update


def batch_progress(bar):
    """A warm start's progress callback (batches done, their total, the loss) drawn on `bar`."""

    def update(done: int, total: int, loss: float) -> None:
        if bar.total != total:
            bar.reset(total=total)
        bar.update(done - bar.n)
        bar.set_postfix(loss=f"{loss:.3f}", refresh=False)

    return update


def ensure_builtin_with_progress() -> str:
    from ..policy.builtin import BuiltinRecipe, ensure_builtin_policy, find_builtin_policy

    recipe = BuiltinRecipe()
    found = find_builtin_policy(recipe)
    if found is not None:
        return str(found)
    bar = progress_bar("building the built-in policy (once)", unit="batch")
    try:
        return str(ensure_builtin_policy(recipe, progress=imitation_progress(bar, recipe.epochs)))
    finally:
        bar.close()
