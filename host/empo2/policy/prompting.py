"""How an agent's turn and its reflection are put into words.

One place builds every prompt, so the rollout, the update (with and without tips), the tip
writer, the demonstrations that warm-start the built-in policy and the memory keys all see the
same text. Prompts are chat messages; the model's own chat template turns them into tokens.

The system prompt is the built-in worlds' one-liner unless the environment supplies its own
instructions (`instructions()`, e.g. ScienceWorld's action formats and focus warning): real
benchmarks need more words than the built-in policy was trained on, and the built-in prompts
stay byte-identical.

Each step is its own sample (as in verl-agent, which the reference code builds on): the user turn
carries the task, the last few steps of history and the current observation, and, in memory mode,
a delimited tip block. The memory key of a step is its user turn *without* the tip block.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

SYSTEM_PROMPT = "you are an agent in a text world . answer with one action ."
TIP_OPEN, TIP_CLOSE, TIP_SEPARATOR = "<tip>", "</tip>", " | "
REFLECTION_INSTRUCTION = (
    "reflect : in one sentence , say what happened , what you learned and how far you were from success ."
)


@dataclass(frozen=True)
class Turn:
    """One past step as the prompt shows it."""

    action: str
    observation: str


def clip_words(text: str, max_words: int) -> str:
    parts = text.split()
    return " ".join(parts[:max_words]) if len(parts) > max_words else " ".join(parts)


def shown_tip(text: str, action: str, score: float | None = None) -> str:
    """How one retrieved entry reads in the tip block: the tip, then the action its episode took
    in the most similar state, then (memory.show_score) the score that episode earned: the
    reference code's entry = tip + action + score."""
    shown = f"{text.strip()} ; action : {action}" if action else text.strip()
    return f"{shown} ; score : {score:g}" if score is not None else shown


def tip_block(tips: Sequence[str]) -> str:
    """The delimited block that carries retrieved tips into a user turn ('' when none)."""
    if not tips:
        return ""
    return f"{TIP_OPEN} {TIP_SEPARATOR.join(t.strip() for t in tips)} {TIP_CLOSE}"


def step_user_text(
    task_description: str,
    history: Sequence[Turn],
    observation: str,
    history_steps: int,
    observation_words: int,
) -> str:
    """The user turn of one step without tips; also the step's memory key."""
    recent = list(history)[-history_steps:] if history_steps > 0 else []
    lines = [f"task : {task_description}"]
    if recent:
        past = " ; ".join(f"{t.action} -> {clip_words(t.observation, observation_words)}" for t in recent)
        lines.append(f"history : {past}")
    lines.append(f"now : {clip_words(observation, observation_words * 3)}")
    return " . ".join(lines)


def with_tips(user_text: str, tips: Sequence[str]) -> str:
    """The same user turn with the tip block at its end (memory mode); the text without tips
    stays a prefix, the memory key.

    Tips arrive best first (retrieval order: highest stored score first) and the block lists
    them best last, so the best tip and its action sit right before the answer: a fixed distance
    that a small model learns to copy from long before it learns to search a prompt by content.
    The paper leaves the order inside the block open (docs/paper.md §2.3); a large instruct
    model reads either.
    """
    block = tip_block(list(reversed(tips)))
    return f"{user_text} {block}" if block else user_text


def system_prompt_for(env) -> str:
    """The environment's own instructions when it has them, else the built-in system prompt (a
    PluginEnv's instructions() is None for an environment without them)."""
    instructions = getattr(env, "instructions", None)
    return (instructions() if callable(instructions) else None) or SYSTEM_PROMPT


def step_messages(user_text: str, system: str = SYSTEM_PROMPT) -> list[dict]:
    return [
        {"role": "system", "content": system},
        {"role": "user", "content": user_text},
    ]


def reflection_messages(
    task_description: str,
    turns: Sequence[Turn],
    final_score: float,
    observation_words: int,
    system: str = SYSTEM_PROMPT,
) -> list[dict]:
    """The conversation the policy answers with a tip after an episode (docs/paper.md §2.4).
    observation_words: words kept of each observation; 0 keeps them whole."""

    def shown(observation: str) -> str:
        return clip_words(observation, observation_words) if observation_words else " ".join(observation.split())

    episode = " ; ".join(f"{t.action} -> {shown(t.observation)}" for t in turns)
    user = (
        f"task : {task_description} . episode : {episode} . "
        f"final score : {int(round(final_score))} . {REFLECTION_INSTRUCTION}"
    )
    return [
        {"role": "system", "content": system},
        {"role": "user", "content": user},
    ]
