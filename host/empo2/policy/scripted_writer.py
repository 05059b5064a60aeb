"""`memory.tip_writer=scripted`: the built-in worlds write each episode's tip from its facts.

A stand-in for what the built-in policy cannot do and the paper's 7B model can: reflect
truthfully on an episode. The policy of the miniature (1.7 M parameters) writes its own tips
badly: its warm start names the room an item was taken in 0% of the time after searching on,
claims a success after the decoy in about half its tips, and under RL its writing decays into
word salad that misleads every memory rollout (docs/bench/b3/RESULTS.md). This writer
replays the episode's executed actions in a fresh world and states what happened in the
demonstrations' own tip format (`render_tip`): where the item was taken, or which containers
were opened in vain, and the score. It is a documented deviation (docs/algorithm.md, item 18)
for separating the algorithm from the small model's reflection, not the default, and it exists
for the built-in worlds only (config validation refuses it elsewhere).
"""

from __future__ import annotations

from collections.abc import Sequence

from ..envs.builtin.env import BuiltinEnv
from ..envs.builtin.tasks import CARD_ITEM, KEY_ITEM
from .demos import render_tip


def scripted_tip(task: str, variation: int, executed_actions: Sequence[str], score: float) -> str:
    """The tip a truthful writer leaves after an episode of (task, variation) that executed
    `executed_actions` (valid actions, after correction) and ended at `score`."""
    env = BuiltinEnv(max_steps=len(executed_actions) + 1, correct_actions=False)
    env.reset(task, variation)
    w = env.world
    searched: list[tuple[str, str]] = []
    found_in = key_in = card_in = None
    for action in executed_actions:
        env.step(action)
        # A locked container tried without its key was not searched: it stays closed.
        if action.startswith("open ") and action[len("open ") :] in env.open:
            searched.append((action[len("open ") :], env.room))
        if action.startswith("take ") and env.taken and found_in is None:
            found_in = (w.container_of[env.room], env.room)  # where it was, not the last opened
        if action == f"take {KEY_ITEM}" and w.key_room is not None and key_in is None:
            key_in = (w.container_of[env.room], env.room)
        if action == f"take {CARD_ITEM}" and w.card_room is not None and card_in is None:
            card_in = (w.container_of[env.room], env.room)
    empty = [s for s in dict.fromkeys(searched) if s not in (found_in, key_in, card_in)]
    return render_tip(w.item, score, found_in, empty, w.target, key_in=key_in, card_in=card_in)


class ScriptedTipWriter:
    """Passed where a tip-writing model goes (`rollout.write_tips`): writes `scripted_tip`."""

    def write(self, episodes) -> None:
        for ep in episodes:
            ep.tip = scripted_tip(ep.task, ep.variation, [s.executed_action for s in ep.steps], ep.final_score)
