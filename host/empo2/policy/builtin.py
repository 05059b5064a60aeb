"""The built-in policy: a tiny Qwen2 model warm-started by imitation of scripted demonstrations.

    empo2-host build-policy            # builds once, then reuses the cache

Deterministic from its seed: the same recipe and seed give the same weights on the same machine.
It is saved with save_pretrained, so the trainer loads it through exactly the code that loads
Qwen2.5-7B-Instruct. The cache lives in $EMPO2_CACHE_DIR (default ~/.cache/empo2); its folder
name carries a hash of the recipe, so a changed recipe never reuses stale weights.
"""

from __future__ import annotations

import hashlib
import json
import random
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

import torch

from ..cache import cache_root
from ..envs.builtin.env import BuiltinEnv
from ..envs.builtin.tasks import (
    CONTAINER_POOL,
    DECOY_WORD,
    DEMO_VARIATION_BASE,
    DISTRACTOR_ITEMS,
    ROOM_POOL,
    TASK_KINDS,
    TEST_VARIATIONS,
    TRAIN_VARIATIONS,
    card_tasks,
    key_tasks,
)
from . import prompting
from .demos import PromptShape, demonstration_examples, render_tip
from .imitation import imitate, steps_per_epoch
from .model import build_tiny_model
from .saved_folder import BUILD_REPORT, build_once, file_digests, save_policy_folder  # noqa: F401 (file_digests: imported from here by its tests)
from .tokenizer import build_word_tokenizer

RECIPE_VERSION = 7

# progress(done, total, epoch, loss): after every optimiser step of a build, counted over the
# whole build (every epoch), so a bar and its ETA cover all of it, not the current epoch.
BuildProgress = Callable[[int, int, int, float], None]


class BuildCancelled(Exception):
    """Raised by a build's progress callback to stop the build. Nothing reaches the cache: the
    weights are written (to a temporary folder, then renamed) only after the last step."""


@dataclass
class BuiltinRecipe:
    """Everything that determines the built-in policy's weights."""

    seed: int = 0
    size: str = "default"
    episodes: dict[str, int] = field(
        default_factory=lambda: {
            # Tip-following dominates: copying an action out of the tip block is the one skill a
            # model this small learns slowly (content-based attention), and the one EMPO² needs.
            "habit": 100,
            "stuck": 40,
            "wander": 40,
            "explore": 40,
            "tip-success": 500,
            "tip-failure": 120,
            # Not in the default: the reflection-only "linger" and "decoy" (demos.py). With 150 and
            # 80 of them (the recipe v8 builds) the writer stopped claiming false successes
            # but still named a near-random room, and the failure tip lost most of its pull
            # (docs/builtin.md).
        }
    )
    # v7: 10 epochs, not 6. The copy skill appears abruptly late in training (here: loss 0.39 →
    # 0.26 → 0.15 in epochs 5–7); on one machine 6 epochs never reached it and the policy
    # followed a success tip 3–9% of the time (docs/builtin.md).
    epochs: int = 10
    batch_size: int = 16
    lr: float = 1e-3
    warmup: float = 0.06  # share of the steps spent warming up, then a cosine to zero (imitation.py)
    max_steps: int = 15
    history_steps: int = 3
    observation_words: int = 10
    # Demonstrations of the kinds with a key (`build-policy --two-facts`), played after the
    # others; none in the default recipe.
    two_fact_episodes: dict[str, int] = field(default_factory=dict)
    # Demonstrations of the kinds with a card (`build-policy --three-facts`), played last; none
    # in the default recipe.
    three_fact_episodes: dict[str, int] = field(default_factory=dict)

    def fields(self) -> dict:
        """The recipe as its key and its build report record it."""
        fields = asdict(self)
        # Added after v8: left out when empty, so the keys of the builds before them stand.
        for added in ("two_fact_episodes", "three_fact_episodes"):
            if not fields[added]:
                del fields[added]
        return fields

    def key(self) -> str:
        blob = json.dumps({"v": RECIPE_VERSION, **self.fields()}, sort_keys=True).encode()
        return hashlib.sha256(blob).hexdigest()[:12]


# `build-policy --two-facts`: the default recipe plus the two-fact kinds' tip-following,
# exploring and failure-tip demonstrations (docs/bench/r8-two-facts/). Tip-following dominates
# as in the default; the key's extra three steps make each episode longer.
TWO_FACT_EPISODES = {"explore": 60, "tip-success": 250, "tip-failure": 60}

# `build-policy --three-facts`: the default recipe plus the three-fact kinds' tip-following and
# failure-tip demonstrations (docs/bench/r8e-three-facts/). No exploring ones: on the two-fact
# kind they were where blind success came from (docs/bench/r8d-no-two-fact-explorers/).
THREE_FACT_EPISODES = {"tip-success": 250, "tip-failure": 60}


# A size's own peak imitation rate, where the recipe's 1e-3 (tuned on the default) does not suit
# it. The large policy (twice the width) at 1e-3 never learned to copy an action out of a tip
# (0 of 64 gold tips followed); at half the rate, the width rule, it does
# (docs/bench/r4-size/LARGE-RECIPE.md).
SIZE_LR: dict[str, float] = {"large": 5e-4}


def recipe_for(
    size: str = "default",
    seed: int = 0,
    lr: float | None = None,
    two_facts: bool = False,
    two_fact_explorers: int | None = None,
    three_facts: bool = False,
    three_fact_followers: int | None = None,
) -> BuiltinRecipe:
    """The recipe that `build-policy --size` and `policy.model=builtin:<size>` build: the
    default recipe at that size, with the size's own rate where it has one (`lr` overrides it:
    `build-policy --lr`), and with `two_facts` the two-fact kinds' demonstrations too
    (`build-policy --two-facts`), of which `two_fact_explorers` replaces the count of exploring
    ones (`--two-fact-explorers`: blind success on the kind comes from them), and with
    `three_facts` the three-fact kinds' demonstrations (`build-policy --three-facts`), of which
    `three_fact_followers` replaces the count of tip-following ones (`--three-fact-followers`)."""
    two_fact_episodes = dict(TWO_FACT_EPISODES) if two_facts else {}
    three_fact_episodes = dict(THREE_FACT_EPISODES) if three_facts else {}
    if three_facts and three_fact_followers is not None:
        three_fact_episodes["tip-success"] = three_fact_followers
    if two_facts and two_fact_explorers is not None:
        two_fact_episodes["explore"] = two_fact_explorers
    return BuiltinRecipe(
        seed=seed,
        size=size,
        lr=lr if lr is not None else SIZE_LR.get(size, BuiltinRecipe.lr),
        two_fact_episodes=two_fact_episodes,
        three_fact_episodes=three_fact_episodes,
    )


# The default recipe's weights ship inside the package, so a fresh clone trains in seconds
# instead of building for half an hour; `empo2-host build-policy --force` reproduces them, and
# test_builtin_policy.py checks that the shipped files are the ones their build report records.
SHIPPED_DIR = Path(__file__).parent / "shipped"


def builtin_policy_path(recipe: BuiltinRecipe) -> Path:
    """Where `build-policy` writes this recipe's weights (the cache)."""
    return cache_root() / "policies" / f"builtin-{recipe.size}-seed{recipe.seed}-{recipe.key()}"


def shipped_policy_path(recipe: BuiltinRecipe) -> Path | None:
    """The package's copy of this recipe's weights, if it ships one (the default recipe)."""
    path = SHIPPED_DIR / builtin_policy_path(recipe).name
    return path if (path / BUILD_REPORT).is_file() else None


def find_builtin_policy(recipe: BuiltinRecipe) -> Path | None:
    """The folder holding this recipe's weights without building: the cache (a local build
    wins), else the shipped copy; None when neither has them."""
    cached = builtin_policy_path(recipe)
    if (cached / BUILD_REPORT).is_file():
        return cached
    return shipped_policy_path(recipe)


def vocabulary_corpus(
    shape: PromptShape, max_steps: int, with_key_kinds: bool = False, with_card_kinds: bool = False
) -> list[str]:
    """Every word the built-in worlds, prompts and tips can produce.

    Random play over every task kind (the held-out one too: its words must be readable, as an
    LLM knows words it was never trained to act on) plus the fixed strings and the scores.
    """
    texts = [
        prompting.SYSTEM_PROMPT,
        prompting.REFLECTION_INSTRUCTION,
        "task : history : now : ->",
        "episode : final score : | ;",
        # the decoy's rarer messages, which random play may not reach
        "you take out the . sparks and goes dark . does not work . has no place for",
    ]
    texts += list(ROOM_POOL) + list(CONTAINER_POOL) + list(DISTRACTOR_ITEMS)
    texts += [str(n) for n in range(-100, 101)]
    rng = random.Random("empo2-vocabulary")
    env = BuiltinEnv(max_steps=max_steps, correct_actions=False)
    variations = (
        list(TRAIN_VARIATIONS) + list(TEST_VARIATIONS) + list(range(DEMO_VARIATION_BASE, DEMO_VARIATION_BASE + 200))
    )
    # The kinds the shipped weights were built from (a later kind's words would change them),
    # and with `with_key_kinds` the kinds with a key too, with `with_card_kinds` those with a card.
    wanted = (key_tasks() if with_key_kinds else []) + (card_tasks() if with_card_kinds else [])
    for kind in (k for k in TASK_KINDS.values() if k.in_warm_start or k.name in wanted):
        texts += [kind.use_verb, *kind.items, *kind.targets, kind.hiding_room, DECOY_WORD]
        for variation in variations:
            obs, info = env.reset(kind.name, variation)
            texts += [obs, info.task_description]
            w = env.world
            texts.append(render_tip(w.item, 100, (w.container_of[w.rooms[2]], w.rooms[2]), [], w.target))
            texts.append(render_tip(w.item, 50, (w.container_of[w.rooms[2]], w.rooms[2]), [], w.target))
            texts.append(render_tip(w.item, 0, None, [(w.container_of[w.rooms[0]], w.rooms[0])], w.target))
            texts.append(render_tip(w.item, 0, None, [], w.target))
            done = False
            while not done:
                action = rng.choice(info.valid_actions)
                obs, _, done, info = env.step(action)
                texts += [action, obs]
            # The goal's own sequence, so success messages are in the corpus too.
            obs, info = env.reset(kind.name, variation)
            for action in w.gold_actions():
                obs, _, done, info = env.step(action)
                texts += [action, obs]
    return texts


class _StoppedEarly(Exception):
    """The build reached `stop_after` steps."""


def build_builtin_policy(
    recipe: BuiltinRecipe, destination: Path, progress: BuildProgress | None = None, stop_after: int | None = None
) -> dict:
    """Builds the policy into `destination` (atomically); returns the build report. A progress
    callback that raises (BuildCancelled) stops it with nothing written. With `stop_after`, the
    build stops after that many optimizer steps and saves the weights it has, its report saying
    so: the first steps of the real build, enough to tell whether two machines build the same
    policy (benchmarks/build_fingerprint.py) without the hour the whole build takes."""
    started = time.time()
    torch.manual_seed(recipe.seed)
    shape = PromptShape(recipe.history_steps, recipe.observation_words)
    examples = demonstration_examples(
        recipe.episodes, recipe.seed, shape, recipe.max_steps, recipe.two_fact_episodes, recipe.three_fact_episodes
    )
    corpus = vocabulary_corpus(
        shape,
        recipe.max_steps,
        with_key_kinds=bool(recipe.two_fact_episodes),
        with_card_kinds=bool(recipe.three_fact_episodes),
    )
    corpus += [m["content"] for messages, _ in examples for m in messages]
    corpus += [target for _, target in examples]
    tokenizer = build_word_tokenizer(corpus)
    model = build_tiny_model(tokenizer, recipe.size, recipe.seed)
    steps = steps_per_epoch(len(examples), recipe.batch_size)
    total = steps * recipe.epochs

    def per_step(epoch: int, step: int, _steps: int, loss: float) -> None:
        done = epoch * steps + step + 1
        if progress is not None:
            progress(done, total, epoch, loss)
        if stop_after is not None and done >= stop_after:
            raise _StoppedEarly

    stopped = False
    try:
        losses = imitate(
            model,
            tokenizer,
            examples,
            epochs=recipe.epochs,
            batch_size=recipe.batch_size,
            lr=recipe.lr,
            seed=recipe.seed,
            progress=per_step,
            warmup_steps=round(recipe.warmup * steps * recipe.epochs),
        )
    except _StoppedEarly:
        losses, stopped = [], True  # a stopped build reports no epoch's loss
    model.eval()
    report = {
        "recipe": recipe.fields(),
        "recipe_key": recipe.key(),
        "examples": len(examples),
        "parameters": sum(p.numel() for p in model.parameters()),
        "vocabulary": len(tokenizer),
        "epoch_losses": losses,
        "seconds": round(time.time() - started, 1),
    }
    if stopped:
        report["stopped_after_steps"] = stop_after
    return save_policy_folder(model, tokenizer, report, destination)


def ensure_builtin_policy(recipe: BuiltinRecipe | None = None, progress: BuildProgress | None = None) -> Path:
    """The built-in policy's folder: cached or shipped, else built into the cache first (once,
    whoever else needs it at the same time: saved_folder.build_once)."""
    recipe = recipe or BuiltinRecipe()
    found = find_builtin_policy(recipe)
    if found is not None:
        return found
    return build_once(builtin_policy_path(recipe), lambda path: build_builtin_policy(recipe, path, progress))
