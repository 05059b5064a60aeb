"""A supervised warm start for a packaged chat model on the built-in worlds' demonstrations.

    empo2-host build-policy --model smollm2-135m-instruct --warm-start   # prints the folder
    empo2-host train policy.model=<that folder>

Zero-shot, SmolLM2-135M-Instruct answers a built-in world in prose and never with an action
(docs/builtin.md). This fine-tunes it on the same scripted demonstrations that warm-start the
built-in policy (policy/demos.py: every step's action and every episode's reflection), rendered
through the model's own chat template, with the same imitation loop (policy/imitation.py:
cross-entropy on the assistant's tokens, warmup then cosine). The result is cached like the
conversion it starts from, under a hash of its recipe.

It runs on a GPU when one is there. On a CPU it is slow: the default recipe's 2,153 examples
(179 prompt tokens on average) for two epochs, 540 optimizer steps of 8, took 45 minutes on 2
cores (docs/builtin.md has the measured time and what the result does). Full fine-tune: LoRA
saves no time on a CPU at this size.

Its prompts keep whole rooms in the history (`observation_words` 50; a room's description has
32-50 words): a demonstration goes on from an opened container to the next room, and there the
exits are only in the history. Cut there, the demonstrations taught naming rooms the prompt
did not show, and the model named rooms from other houses. A run reads it best with the same
cut (`saved_folder.prompt_shape_overrides`; `build-policy --warm-start` prints them).
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

from .pretrained import PACKAGED_MODELS, ensure_packaged_policy, packaged_policy_path
from .saved_folder import build_once, save_policy_folder

RECIPE_VERSION = 1
# progress(done, total, loss): after every optimiser step, counted over the whole warm start.
Progress = Callable[[int, int, float], None]


@dataclass
class ChatWarmStartRecipe:
    """Everything that determines the warm-started weights (besides the converted model)."""

    # Tip-reading first, as for the built-in policy (policy/builtin.py): copying the action of
    # a success tip is the skill EMPO² needs; habit, exploration and wandering give it actions
    # to take without a tip (with 20 habit and 20 explore episodes only, 72% of its actions
    # without tips were valid; with these, 88-97%: docs/builtin.md).
    episodes: dict[str, int] = field(
        default_factory=lambda: {"habit": 30, "explore": 50, "wander": 20, "tip-success": 80, "tip-failure": 30}
    )
    # Two passes leave the no-tip log π of every kind's hiding room between -5 and -2 (sure
    # enough to act, unsure enough that a tip has something to teach); a third moved the valid
    # share by 3 points on the earlier mix.
    epochs: int = 2
    batch_size: int = 8
    # One epoch of ~150 steps must move a model that answers in prose to one that acts: a
    # small model's fine-tuning rate, not a 7B model's.
    lr: float = 1e-4
    warmup: float = 0.1  # share of the steps spent warming up, then a cosine to zero
    seed: int = 0
    max_steps: int = 15
    history_steps: int = 3
    observation_words: int = 50  # whole rooms in the history (see the module's docstring)

    def key(self) -> str:
        blob = json.dumps({"v": RECIPE_VERSION, **asdict(self)}, sort_keys=True).encode()
        return hashlib.sha256(blob).hexdigest()[:12]


def warm_start_path(name: str, recipe: ChatWarmStartRecipe) -> Path:
    converted = packaged_policy_path(PACKAGED_MODELS[name])
    return converted.with_name(f"{converted.name}-sft-{recipe.key()}")


def build_warm_start(
    name: str, recipe: ChatWarmStartRecipe, destination: Path, progress: Progress | None = None
) -> dict:
    """Fine-tunes the converted model on the demonstrations into `destination` (atomically);
    returns the build report."""
    from .demos import PromptShape, demonstration_examples

    started = time.time()
    source = ensure_packaged_policy(name)
    shape = PromptShape(recipe.history_steps, recipe.observation_words)
    examples = demonstration_examples(recipe.episodes, recipe.seed, shape, recipe.max_steps)
    model, tokenizer, report = fine_tune(source, examples, recipe, progress)
    report = {
        "model": name,
        "source": source.name,
        "recipe": asdict(recipe),
        "recipe_key": recipe.key(),
        **report,
        "seconds": round(time.time() - started, 1),
    }
    return save_policy_folder(model, tokenizer, report, destination)


def fine_tune(source: Path, examples: list, recipe, progress: Progress | None = None):
    """The model in `source` fitted to (chat messages, answer) `examples` by `recipe`'s epochs,
    batch_size, lr, warmup and seed; returns (model, tokenizer, the report's training part)."""
    import torch

    from .imitation import imitate, steps_per_epoch
    from .model import load_policy

    # On a GPU when there is one (minutes there, tens of minutes on 2 CPU cores), in float32
    # either way; the report records which.
    device = "cuda" if torch.cuda.is_available() else "cpu"
    model, tokenizer = load_policy(str(source), device=device, dtype="float32")
    steps = steps_per_epoch(len(examples), recipe.batch_size)
    total = steps * recipe.epochs
    per_step = (
        None
        if progress is None
        else (lambda epoch, step, _steps, loss: progress(epoch * steps + step + 1, total, loss))
    )
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(recipe.seed)
        losses = imitate(
            model,
            tokenizer,
            examples,
            epochs=recipe.epochs,
            batch_size=recipe.batch_size,
            lr=recipe.lr,
            seed=recipe.seed,
            progress=per_step,
            warmup_steps=round(recipe.warmup * total),
        )
    model.eval()
    return (
        model,
        tokenizer,
        {"examples": len(examples), "optimizer_steps": total, "epoch_losses": losses, "device": device},
    )


def ensure_warm_start(name: str, recipe: ChatWarmStartRecipe | None = None, progress: Progress | None = None) -> Path:
    """The warm-started folder, built first when the cache lacks it (one builder at a time,
    as for the built-in policy)."""
    recipe = recipe or ChatWarmStartRecipe()
    return build_once(warm_start_path(name, recipe), lambda path: build_warm_start(name, recipe, path, progress))
