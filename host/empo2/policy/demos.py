"""Scripted demonstrations in the built-in worlds that warm-start the built-in policy by imitation
(policy/builtin.py, their one user, builds the policy from them).

They give the policy a plausible but suboptimal prior, and teach it to read and write tips the way
an instruct model would:

- habit: the item is in the start room or the kitchen; the agent searches there, passes the
  decoy by, and finishes.
- stuck: the item is nowhere; the habitual search finds the decoy, the agent delivers it, the
  target fails, and it keeps going back and forth between the hallway and the kitchen (the
  paper's agent that keeps focusing on the bulb).
- wander: the item is nowhere; after the habitual search the agent opens a room or two at random,
  then gives up like `stuck`.
- explore: the item is in a random non-habit room; the agent searches non-habit rooms in random
  order from its first step. This is the only blind exploration the warm start saw, and it keeps
  the no-tip prior of going straight to any room low but above the update's mask (log π about
  −4; docs/paper.md §3): a distilled room choice is not masked away.
- tip-success: a tip in the prompt says where the item was; the agent goes straight there. Half
  of these tips carry their entry's action, half only the tip's text (a person's edited tip, a
  tip retrieved from another state): the agent must read the room out of the sentence.
- tip-failure: tips list containers that were searched in vain; the agent searches rooms that no
  tip mentions until it finds the item, then finishes.
- reflection: after every demonstration episode, the tip a good writer would leave (render_tip).
- linger (recipe v8; reflection only): the agent finds and takes the item, then opens one to
  three more containers elsewhere before it delivers (or runs out of steps). Only the tip is
  imitated, never these actions: it teaches the writer that the tip names the room where the
  item was *taken*, which every other demonstration confounds with the last room searched (a
  trained policy's late episodes do search on after taking, and v7's writer then named the
  wrong room; docs/bench/b1/RESULTS.md).
- decoy (recipe v8; reflection only): the habitual search delivers the decoy and the target
  fails, and the episode ends a step or two later. v7's writer, which saw this only inside the
  long back-and-forth of `stuck`, wrote "it worked . score 100" after half of such episodes
  (probe_tips.py); a success claim in a failure tip sends the reader to the decoy.

The demonstration worlds are variations 10_000+ of the in-distribution kinds; the item of an
exploring or tip-following world hides in a uniformly random non-habit room, so reading tips is
learned without leaking where each kind hides its item. Nothing here touches the held-out kind.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Iterator
from dataclasses import dataclass, field

from ..envs.builtin.env import BuiltinEnv
from ..envs.builtin.tasks import (
    CARD_ITEM,
    DEMO_VARIATION_BASE,
    HABIT_ROOMS,
    KEY_ITEM,
    card_tasks,
    demonstrated_tasks,
    key_tasks,
)
from .prompting import Turn, reflection_messages, shown_tip, step_messages, step_user_text, with_tips


@dataclass
class PromptShape:
    """How much of the past a step's prompt shows (shared with the trainer's config)."""

    history_steps: int = 4
    observation_words: int = 12


@dataclass
class DemoEpisode:
    task: str
    variation: int
    behaviour: str
    tips: list[str]
    description: str
    steps: list[tuple[str, str]] = field(default_factory=list)  # (user text with tips, action)
    turns: list[Turn] = field(default_factory=list)
    searched: list[tuple[str, str]] = field(default_factory=list)  # (container, room), in order
    final_score: float = 0.0
    tip: str = ""


def render_tip(
    item: str,
    score: float,
    found_in: tuple[str, str] | None,
    searched: list[tuple[str, str]],
    target: str,
    key_in: tuple[str, str] | None = None,
    card_in: tuple[str, str] | None = None,
) -> str:
    """The one-sentence tip a good writer leaves after an episode (also how tips are shown).
    `key_in`: where the episode took the key of a locked container, stated before the item, as
    it was found before it; `card_in`: where it took the card that opened the key's container,
    stated first."""
    return (
        _opener_part(CARD_ITEM, card_in) + _opener_part(KEY_ITEM, key_in) + _item_part(item, score, found_in, searched)
    )


def _opener_part(opener: str, found_in: tuple[str, str] | None) -> str:
    return "" if found_in is None else f"the {opener} was in the {found_in[0]} in the {found_in[1]} . "


def _item_part(item: str, score: float, found_in: tuple[str, str] | None, searched: list[tuple[str, str]]) -> str:
    points = int(round(score))
    if found_in is not None:
        container, room = found_in
        if points >= 100:
            return f"the {item} was in the {container} in the {room} . it worked . score {points}"
        return f"the {item} was in the {container} in the {room} . not finished . score {points}"
    empty = [f"the {c} in the {r}" for c, r in searched]
    if not empty:
        return f"i opened nothing . look in other rooms . score {points}"
    return f"no {item} in {' or '.join(empty)} . score {points}"


# -- behaviours: generators of actions that may look at the episode's state -------------------


def _deliver(env: BuiltinEnv, thing: str | None = None) -> Iterator[str]:
    """Take `thing` (default: the task's item; the decoy when it is delivered in vain), bring it
    to the target and use the target."""
    w = env.world
    thing = thing or w.item
    yield f"take {thing}"
    if env.room != w.target_room:
        yield f"go to {w.target_room}"
    yield f"put {thing} in {w.target}"
    yield f"{w.kind.use_verb} {w.target}"


def _open_in(env: BuiltinEnv, room: str) -> Iterator[str]:
    if env.room != room:
        yield f"go to {room}"
    yield f"open {env.world.container_of[room]}"


def _search(env: BuiltinEnv, rooms: list[str], take_decoy: bool = False) -> Iterator[str]:
    """Visit rooms in order, opening each container, until the item (or, when `take_decoy`,
    the decoy, which is then delivered in vain) is seen. In a world with a key (and a card), the
    key or card is taken where it is seen, and a container found locked before that is come back
    to with it."""
    locked_in: dict[str, str] = {}  # what opens it -> the room of a container found locked
    for room in rooms:
        yield from _open_in(env, room)
        opener = env.locked.get(env.world.container_of[room])
        if opener is not None:
            locked_in[opener] = room
            continue
        yield from _take_openers(env, locked_in)
        if env.world.item in env.visible_items():
            yield from _deliver(env)
            return
        if take_decoy and env.world.decoy in env.visible_items():
            yield from _deliver(env, env.world.decoy)
            return


def _take_openers(env: BuiltinEnv, locked_in: dict[str, str]) -> Iterator[str]:
    """Take a card or key seen in the open container, and go back to open what it opens if that
    was found locked (where a card opens the key's container, then take the key in turn)."""
    for opener in (CARD_ITEM, KEY_ITEM):
        if opener in env.visible_items():
            yield f"take {opener}"
            room = locked_in.pop(opener, None)
            if room is not None:
                yield from _open_in(env, room)
                yield from _take_openers(env, locked_in)


def _habit(env: BuiltinEnv, rng: random.Random, take_decoy: bool = False) -> Iterator[str]:
    if rng.random() < 0.3:
        yield "look around"
    yield from _search(env, list(HABIT_ROOMS), take_decoy)


def _back_and_forth(env: BuiltinEnv, rng: random.Random) -> Iterator[str]:
    while True:
        other = "hallway" if env.room != "hallway" else "kitchen"
        yield rng.choice(["look around", f"go to {other}"])


def _stuck(env: BuiltinEnv, rng: random.Random) -> Iterator[str]:
    yield from _habit(env, rng, take_decoy=True)
    yield from _back_and_forth(env, rng)


def _explore(env: BuiltinEnv, rng: random.Random) -> Iterator[str]:
    rooms = [r for r in env.world.rooms if r not in HABIT_ROOMS]
    rng.shuffle(rooms)
    yield from _search(env, rooms)


def _wander(env: BuiltinEnv, rng: random.Random) -> Iterator[str]:
    yield from _habit(env, rng)
    rooms = [r for r in env.world.rooms if r not in HABIT_ROOMS]
    yield from _search(env, rng.sample(rooms, rng.randint(1, 2)))
    yield from _back_and_forth(env, rng)


def _linger(env: BuiltinEnv, rng: random.Random) -> Iterator[str]:
    w = env.world
    others = [r for r in w.rooms if r not in HABIT_ROOMS and r != w.item_room]
    rng.shuffle(others)
    for room in others[: rng.randint(0, 2)] + [w.item_room]:
        yield from _open_in(env, room)
    yield f"take {w.item}"
    for room in rng.sample([r for r in w.rooms if r != w.item_room], rng.randint(1, 3)):
        yield from _open_in(env, room)
    if env.room != w.target_room:
        yield f"go to {w.target_room}"
    yield f"put {w.item} in {w.target}"
    yield f"{w.kind.use_verb} {w.target}"


def _decoy(env: BuiltinEnv, rng: random.Random) -> Iterator[str]:
    w = env.world
    yield from _search(env, sorted(HABIT_ROOMS, key=lambda r: r == w.decoy_room), take_decoy=True)
    yield from itertools.islice(_back_and_forth(env, rng), rng.randint(0, 2))


def _tip_success(env: BuiltinEnv, rng: random.Random) -> Iterator[str]:
    w = env.world
    yield from _search(env, [r for r in (w.card_room, w.key_room, w.item_room) if r])


def _tip_failure(env: BuiltinEnv, rng: random.Random, mentioned: set[str]) -> Iterator[str]:
    rooms = [r for r in env.world.rooms if r not in mentioned and r not in HABIT_ROOMS]
    rng.shuffle(rooms)
    yield from _search(env, rooms)


def _failure_tips(env: BuiltinEnv, rng: random.Random) -> tuple[list[str], set[str]]:
    """One to three tips (with their entries' actions) from earlier fruitless searches, and the
    rooms they mention."""
    w = env.world
    candidates = [r for r in w.rooms if r not in (w.item_room, w.key_room, w.card_room)]  # they hold something
    tips, mentioned = [], set()
    for _ in range(rng.randint(1, 3)):
        rooms = rng.sample(candidates, rng.randint(1, 2))
        if rng.random() < 0.6:
            rooms = list(HABIT_ROOMS)
        mentioned.update(rooms)
        searched = [(w.container_of[r], r) for r in rooms]
        room = rng.choice(rooms)
        action = rng.choice([f"go to {room}", f"open {w.container_of[room]}", "look around"])
        tips.append(shown_tip(render_tip(w.item, 0, None, searched, w.target), action))
    return list(dict.fromkeys(tips)), mentioned


BEHAVIOURS: dict[str, str] = {
    # behaviour -> where the item hides in its worlds (world.py placements)
    "habit": "habit",
    "stuck": "missing",
    "wander": "missing",
    "explore": "elsewhere",
    "tip-success": "elsewhere",
    "tip-failure": "elsewhere",
    "linger": "elsewhere",
    "decoy": "elsewhere",
}

# Behaviours whose episodes teach only the reflection: their actions are never imitated.
REFLECTION_ONLY = frozenset({"linger", "decoy"})


def play_demo(
    task: str, variation: int, behaviour: str, rng: random.Random, shape: PromptShape, max_steps: int
) -> DemoEpisode:
    env = BuiltinEnv(max_steps=max_steps, correct_actions=False, placement=BEHAVIOURS[behaviour])
    observation, info = env.reset(task, variation)
    tips: list[str] = []
    success_tip = ""  # shown with the action the successful episode took at this very step
    text_only = False  # ... or as its text alone
    if behaviour == "tip-success":
        w = env.world
        key_in = (w.container_of[w.key_room], w.key_room) if w.key_room else None
        card_in = (w.container_of[w.card_room], w.card_room) if w.card_room else None
        found_in = (w.container_of[w.item_room], w.item_room)
        success_tip = render_tip(w.item, 100, found_in, [], w.target, key_in=key_in, card_in=card_in)
        if rng.random() < 0.5:
            tips = _failure_tips(env, rng)[0]
        text_only = rng.random() < 0.5
        actions = _tip_success(env, rng)
    elif behaviour == "tip-failure":
        tips, mentioned = _failure_tips(env, rng)
        actions = _tip_failure(env, rng, mentioned)
    else:
        actions = {
            "habit": _habit,
            "stuck": _stuck,
            "wander": _wander,
            "explore": _explore,
            "linger": _linger,
            "decoy": _decoy,
        }[behaviour](env, rng)
    episode = DemoEpisode(task, variation, behaviour, tips, info.task_description)
    found_in = key_in = card_in = None
    for action in actions:
        user = step_user_text(
            info.task_description, episode.turns, observation, shape.history_steps, shape.observation_words
        )
        shown = ([shown_tip(success_tip, "" if text_only else action)] if success_tip else []) + tips
        episode.steps.append((with_tips(user, shown), action))
        observation, _, done, info = env.step(action)
        episode.turns.append(Turn(action, observation))
        # A locked container tried without its key was not searched: it stays closed.
        if action.startswith("open ") and action[len("open ") :] in env.open:
            episode.searched.append((action[len("open ") :], env.room))
        if action.startswith("take ") and env.taken and found_in is None:
            found_in = episode.searched[-1]
        if action == f"take {KEY_ITEM}" and key_in is None:
            key_in = episode.searched[-1]
        if action == f"take {CARD_ITEM}" and card_in is None:
            card_in = episode.searched[-1]
        if done:
            break
    w = env.world
    episode.final_score = env.score
    empty = [s for s in dict.fromkeys(episode.searched) if s not in (found_in, key_in, card_in)]
    episode.tip = render_tip(w.item, env.score, found_in, empty, w.target, key_in=key_in, card_in=card_in)
    return episode


def demonstration_examples(
    n_episodes: dict[str, int],
    seed: int,
    shape: PromptShape,
    max_steps: int,
    two_fact_episodes: dict[str, int] | None = None,
    three_fact_episodes: dict[str, int] | None = None,
) -> list[tuple[list[dict], str]]:
    """(chat messages, target text) pairs for imitation: every step, and every reflection.
    `two_fact_episodes`: more episodes, of the kinds with a key (their worlds place the key and
    the item at random, so nothing about a kind's fixed rooms leaks), after the others;
    `three_fact_episodes`: of the kinds with a card too (card, key and item at random), last."""
    rng = random.Random(f"empo2-demos/{seed}")
    plan = [(behaviour, count, demonstrated_tasks()) for behaviour, count in n_episodes.items()]
    plan += [(behaviour, count, key_tasks()) for behaviour, count in (two_fact_episodes or {}).items()]
    plan += [(behaviour, count, card_tasks()) for behaviour, count in (three_fact_episodes or {}).items()]
    examples: list[tuple[list[dict], str]] = []
    index = 0
    for behaviour, count, tasks in plan:
        for _ in range(count):
            task = tasks[index % len(tasks)]
            variation = DEMO_VARIATION_BASE + index
            index += 1
            episode = play_demo(task, variation, behaviour, rng, shape, max_steps)
            if behaviour not in REFLECTION_ONLY:
                examples += [(step_messages(user), action) for user, action in episode.steps]
            reflection = reflection_messages(
                episode.description, episode.turns, episode.final_score, shape.observation_words
            )
            examples.append((reflection, episode.tip))
    rng.shuffle(examples)
    return examples
