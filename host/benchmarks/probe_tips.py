"""Does a policy read tips? Held-out success with no memory, with a success tip and with a
failure tip, the tips stored in a real MemoryStore exactly as training stores them. Any policy
folder: the built-in policy, a run's export, or a chat model (prompted through its template).

    .venv/bin/python host/benchmarks/probe_tips.py [--policy FOLDER] [--variations 4] [--repeats 4]
        [--preset builtin] [KEY=VALUE ...]

The preset and the overrides set the worlds: `--preset builtin-bench env.max_steps=10` probes
the bench's one kind at a shorter step limit (the no-memory share is what GRPO starts from).

For every held-out variation (the three training kinds and the held-out kind) the probe plays
the gold path once and stores its tip with each step's state and action (a success tip, score
100), and a habitual search of the hallway and the kitchen as a failure tip (score 0). Then it
rolls out every variation `--repeats` times at temperature 1.0 in three conditions: no memory,
the success memory, the failure memory. A policy that reads tips succeeds far more often with
the success tip; where "go to" actions lead matters too, so the probe prints the most visited
rooms of each condition. Two more conditions ask what the policy reads, the tip's text or its
entries' actions: the success text on entries with no action, and on a failed episode's
entries (what a person's rewrite of a failure tip leaves). Under each condition: the share of
actions the policy wrote valid as written (before any correction) and the invalid ones it wrote
most often, and the share of episodes whose first action is the gold path's (with the success
tip: how often it follows the tip at the decisive choice).

Last it asks how the policy *writes* tips (`--writer-samples` tips per scripted episode at the
training temperature): after a success that took the item and then opened one or two more
containers elsewhere (what a trained policy's episodes do), the share of tips that name the room
where the item was taken and the share that name the last room opened; after delivering the
decoy in vain, the share whose text claims a success; the first `--reflections` of those tips
are printed as written.

First it prints the no-tip prior of the decisive choice: at each variation's first step, with no
tips, the log-probability of every token of "go to <the kind's hiding room>" (temperature 1.0);
then that of every action of the gold path in its own states, which shows where a kind fails
that the policy cannot write (the held-out kind's item and target words).
The update's mask drops a token whose no-tip log π is below log δ = −5 (docs/paper.md §3), so a
room choice that the prior puts below it cannot be distilled; one far above it is found
without tips, and exploration is no bottleneck.
"""

from __future__ import annotations

import argparse
import collections
import sys
from dataclasses import dataclass, field
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from empo2.config import ConfigError, load_config  # noqa: E402
from empo2.envs.base import parse_action  # noqa: E402
from empo2.envs.builtin.env import lists_exits  # noqa: E402
from empo2.envs.builtin.tasks import HABIT_ROOMS, TASK_KINDS, out_of_distribution_tasks  # noqa: E402
from empo2.envs.registry import make_env  # noqa: E402
from empo2.memory.embedding import SentenceEmbedder  # noqa: E402
from empo2.memory.store import MemoryStore  # noqa: E402
from empo2.policy.demos import render_tip  # noqa: E402
from empo2.policy.generation import generate_from_ids, sequence_logprobs  # noqa: E402
from empo2.policy.model import load_policy  # noqa: E402
from empo2.policy.prompting import (  # noqa: E402
    Turn,
    reflection_messages,
    step_messages,
    step_user_text,
)
from empo2.policy.tokenizer import encode_chat, encode_response  # noqa: E402
from empo2.training.rollout import Episode, RolloutSettings, roll_out  # noqa: E402
from empo2.training.trainer import resolve_model  # noqa: E402


def _play(env, task: str, variation: int, actions: list[str], shape) -> list[tuple[str, str]]:
    """(memory key, action) of every step of a scripted episode."""
    observation, info = env.reset(task, variation)
    turns, steps = [], []
    for action in actions:
        steps.append(
            (
                step_user_text(info.task_description, turns, observation, shape.history_steps, shape.observation_words),
                action,
            )
        )
        observation, _, _, info = env.step(action)
        turns.append(Turn(action, observation))
    return steps


def probe_memories(config, pairs, embedder) -> dict[str, MemoryStore]:
    """The conditions' memories. Beside the policy's own kinds of entry (a success tip with the
    gold path's actions, a failure tip with the habitual search's), the two a person's rewrite
    can leave: the gold text on entries with no action, and the gold text on the entries of a
    failed episode, whose actions still say what that episode did."""
    env = make_env(config.env)
    names = ("success tip", "failure tip", "success text, no actions", "success text, failed actions")
    memories = {name: MemoryStore.open(None, embedder) for name in names}
    for task, variation in pairs:
        env.reset(task, variation)
        w = env.world
        gold = w.gold_actions()
        key = f"{task}/{variation}"
        gold_tip = render_tip(w.item, 100, (w.container_of[w.item_room], w.item_room), [], w.target)
        gold_steps = _play(env, task, variation, gold, config.policy)
        memories["success tip"].add_episode_tip(key, gold_tip, gold_steps, 100.0, {})
        memories["success text, no actions"].add_episode_tip(
            key, gold_tip, [(state, "") for state, _ in gold_steps], 100.0, {}
        )
        habit = []
        for room in HABIT_ROOMS:
            habit += [f"go to {room}", f"open {w.container_of[room]}"]
        searched = [(w.container_of[r], r) for r in HABIT_ROOMS]
        habit_steps = _play(env, task, variation, habit, config.policy)
        memories["failure tip"].add_episode_tip(
            key, render_tip(w.item, 0, None, searched, w.target), habit_steps, 0.0, {}
        )
        memories["success text, failed actions"].add_episode_tip(key, gold_tip, habit_steps, 100.0, {})
    return memories


GOLD_STEPS = ("go to <room>", "open", "take <item>", "go to <target room>", "put <item> in <target>", "<use> <target>")


def _gold_path_prior(model, tokenizer, env, pairs, shape) -> dict[str, list[list[float]]]:
    """Per task and gold step, the no-tip log π of each token of the gold action in the gold
    path's own states, averaged over the variations (the stop token is not the choice).

    Step 1 is the decisive choice (the mask drops a token below log δ = −5). The later steps ask
    whether the policy can write the action at all once it is in the right place: a kind whose
    item and target words no demonstration used (the held-out kind) has its own tokens far below
    any other, and no tip can bring it through what it cannot write."""
    per_task: dict[str, list[list[list[float]]]] = collections.defaultdict(list)
    for task, variation in pairs:
        observation, info = env.reset(task, variation)
        turns, rows = [], []
        for action in env.world.gold_actions():
            user = step_user_text(
                info.task_description, turns, observation, shape.history_steps, shape.observation_words
            )
            prompt = encode_chat(tokenizer, step_messages(user))
            with torch.no_grad():
                logp, _, mask = sequence_logprobs(
                    model, [prompt], [encode_response(tokenizer, action)], with_entropy=False
                )
            rows.append(logp[0][mask[0]].tolist()[:-1])
            observation, _, _, info = env.step(action)
            turns.append(Turn(action, observation))
        per_task[task].append(rows)
    return {
        t: [[sum(col) / len(col) for col in zip(*(v[k] for v in variations))] for k in range(len(GOLD_STEPS))]
        for t, variations in per_task.items()
    }


SEARCHED_ON, DECOY_DELIVERED = "searched on after taking", "decoy delivered"


def _scripted_episodes(env, task: str, variation: int) -> dict[str, tuple[list[Turn], float, str, str]]:
    """Two scripted episodes of a variation, as (turns, final score, room of take, last room
    opened): a success that searches on after taking the item, and the decoy delivered in vain."""
    env.reset(task, variation)
    w = env.world
    after = [r for r in w.rooms if r not in (w.item_room, w.target_room)][:2]
    linger = [f"go to {w.item_room}", f"open {w.container_of[w.item_room]}", f"take {w.item}"]
    for room in after:
        linger += [f"go to {room}", f"open {w.container_of[room]}"]
    linger += [f"go to {w.target_room}", f"put {w.item} in {w.target}", f"{w.kind.use_verb} {w.target}"]
    decoy, room = [], "hallway"  # episodes start in the hallway
    for stop in sorted(HABIT_ROOMS, key=lambda r: r == w.decoy_room):  # the decoy's room last
        decoy += ([f"go to {stop}"] if stop != room else []) + [f"open {w.container_of[stop]}"]
        room = stop
    decoy += [f"take {w.decoy}"] + ([f"go to {w.target_room}"] if w.target_room != room else [])
    decoy += [f"put {w.decoy} in {w.target}", f"{w.kind.use_verb} {w.target}"]
    played = {}
    for name, actions in ((SEARCHED_ON, linger), (DECOY_DELIVERED, decoy)):
        observation, _ = env.reset(task, variation)
        turns = []
        for action in actions:
            observation, _, _, info = env.step(action)
            assert info.corrected_action is None, f"scripted action {action!r} was not valid"
            turns.append(Turn(action, observation))
        played[name] = (turns, env.score, w.item_room, after[-1])
    return played


def writer_check(config, model, tokenizer, settings, pairs, samples: int, verbatim: int = 0) -> None:
    """Prints how often the policy's tips after the scripted episodes name the right room, the
    last room, or claim a success; and the first `verbatim` tips as written, with the episode
    they reflect on."""
    env = make_env(config.env)
    counts: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    generator = torch.Generator().manual_seed(0)
    for task, variation in pairs:
        _, info = env.reset(task, variation)
        for name, (turns, score, took, last) in _scripted_episodes(env, task, variation).items():
            ids = encode_chat(
                tokenizer,
                reflection_messages(
                    info.task_description, turns, score, settings.reflection_observation_words, settings.system_prompt
                ),
            )
            for gen in generate_from_ids(
                model, tokenizer, [ids] * samples, config.policy.max_tip_tokens, settings.temperature, generator
            ):
                if verbatim > 0:
                    verbatim -= 1
                    print(
                        f"reflection after '{name}' ({task}/{variation}, score {score:.0f}, "
                        f"{len(turns)} steps): {gen.text!r}"
                    )
                c = counts[f"{name} ({task})"]
                c["tips"] += 1
                c["room of take"] += f"in the {took} ." in gen.text
                c["last room opened"] += f"in the {last} ." in gen.text
                c["claims success"] += "it worked" in gen.text or "score 100" in gen.text
    for name, c in counts.items():
        n = c["tips"]
        judged = ("room of take", "last room opened") if name.startswith(SEARCHED_ON) else ("claims success",)
        shares = ", ".join(f"{k} {100 * c[k] / n:.0f}%" for k in judged)
        print(f"writer, {name:37s} {n} tips: {shares}")


@dataclass
class ActionCounts:
    """The actions a policy wrote, how many of them were valid as written, and the invalid ones
    by text."""

    actions: int = 0
    valid: int = 0
    invalid: collections.Counter = field(default_factory=collections.Counter)
    # "go to" actions by whether the observation in front of the policy listed the exits (a
    # room's description does; what "open", "take" or an invalid action returns does not, and
    # the history clips older observations): listed → [written, invalid].
    go_to: dict = field(default_factory=lambda: {True: [0, 0], False: [0, 0]})

    def valid_share(self) -> float:
        return self.valid / max(self.actions, 1)

    def invalid_line(self, top: int) -> str:
        """The invalid actions written most often, with their share of the invalid ones."""
        total = sum(self.invalid.values()) or 1
        return ", ".join(f"'{a}' {100 * n / total:.0f}%" for a, n in self.invalid.most_common(top)) or "none"

    def go_to_line(self) -> str:
        """Invalid "go to"s where the exits were in the observation, and where they were not."""

        def share(listed: bool) -> str:
            written, invalid = self.go_to[listed]
            return f"{100 * invalid / written:.0f}% ({invalid}/{written})" if written else "– (0)"

        return f"invalid 'go to' with the exits in view {share(True)}, without {share(False)}"


class _ValidityCount:
    """A world that counts the actions it is given that are among its valid actions as written
    (before any correction): the share a policy writes valid actions at all."""

    def __init__(self, env, counts: ActionCounts):
        self._env, self._counts = env, counts
        self._exits_in_view = False

    def __getattr__(self, name):
        return getattr(self._env, name)

    def reset(self, *args, **kwargs):
        observation, info = self._env.reset(*args, **kwargs)
        self._saw(observation)
        return observation, info

    def step(self, action: str):
        if not self._env.done:
            command = parse_action(action).lower()
            self._counts.actions += 1
            valid = command in self._env.valid_actions()
            if valid:
                self._counts.valid += 1
            else:
                self._counts.invalid[command] += 1
            if command.startswith("go to "):
                tally = self._counts.go_to[self._exits_in_view]
                tally[0] += 1
                tally[1] += not valid
        observation, reward, done, info = self._env.step(action)
        self._saw(observation)
        return observation, reward, done, info

    def _saw(self, observation: str) -> None:
        self._exits_in_view = lists_exits(observation)


def play(config, model, tokenizer, settings, pairs, repeats: int, memory):
    """`repeats` memory-mode rollouts of every (task, variation) with `memory` (None: no tips),
    all from one generator seeded 0; returns the episodes, the rooms their "go to"s named and
    the ActionCounts."""
    episodes = [Episode(f"e{k}", t, v, k, "memory") for k, (t, v) in enumerate(pairs * repeats)]
    counts = ActionCounts()
    roll_out(
        [_ValidityCount(make_env(config.env), counts) for _ in episodes],
        episodes,
        model,
        tokenizer,
        settings,
        torch.Generator().manual_seed(0),
        memory,
    )
    rooms = collections.Counter(
        s.executed_action[len("go to ") :] for e in episodes for s in e.steps if s.executed_action.startswith("go to ")
    )
    return episodes, rooms, counts


def _first_gold_action(env, task: str, variation: int) -> str:
    env.reset(task, variation)
    return env.world.gold_actions()[0]


def rooms_line(rooms: collections.Counter, top: int) -> str:
    visits = sum(rooms.values()) or 1
    return ", ".join(f"{r} {100 * n / visits:.0f}%" for r, n in rooms.most_common(top))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--policy", default=None, help="model folder (default: the built-in policy)")
    parser.add_argument("--variations", type=int, default=4, help="held-out variations per task")
    parser.add_argument("--repeats", type=int, default=4, help="rollouts per variation and condition")
    parser.add_argument("--writer-samples", type=int, default=4, help="tips per scripted episode")
    parser.add_argument("--reflections", type=int, default=3, help="reflections to print as written")
    parser.add_argument("--preset", default="builtin", help="the preset whose worlds are probed")
    parser.add_argument("overrides", nargs="*", metavar="KEY=VALUE", help="config overrides")
    args = parser.parse_args()

    try:
        config = load_config(args.preset, args.overrides)
    except ConfigError as error:  # one sentence, no traceback
        parser.error(str(error))
    print(f"preset {args.preset}, tasks {config.env.tasks}, step limit {config.env.max_steps}")
    model, tokenizer = load_policy(args.policy or resolve_model("builtin"))
    model.eval()
    env = make_env(config.env)
    tasks = config.env.tasks + out_of_distribution_tasks()
    pairs = [(t, v) for t in tasks for v in env.variations(t, "test")[: args.variations]]
    memories = probe_memories(config, pairs, SentenceEmbedder())
    # Training-temperature sampling (paper: 1.0): the probe asks what a tip changes in training.
    settings = RolloutSettings.from_config(config, env, train=True)
    prior = _gold_path_prior(model, tokenizer, env, pairs, config.policy)
    for task, steps in prior.items():
        print(
            f"no-tip log π of 'go to {TASK_KINDS[task].hiding_room}' at step 1 ({task}), "
            f"per token: {', '.join(f'{x:.2f}' for x in steps[0])}"
        )
    for task, steps in prior.items():
        print(
            f"no-tip log π along the gold path ({task}): "
            + ", ".join(f"{name} {sum(logps):.1f}" for name, logps in zip(GOLD_STEPS, steps))
        )
    print(f"{len(pairs)} held-out variations x {args.repeats} rollouts per condition")
    first_gold = {pair: _first_gold_action(env, *pair) for pair in pairs}
    for name, memory in (("no memory", None), *memories.items()):
        episodes, rooms, counts = play(config, model, tokenizer, settings, pairs, args.repeats, memory)
        by_task = collections.defaultdict(list)
        for episode in episodes:
            by_task[episode.task].append(episode.success)
        success_rate = {t: f"{100 * sum(v) / len(v):.0f}% ({sum(v)}/{len(v)})" for t, v in by_task.items()}
        print(
            f"{name:29s} success {success_rate}  mean score {sum(e.final_score for e in episodes) / len(episodes):.1f}"
        )
        # The success tip's first action is the gold path's: with that tip, this share is how
        # often the policy follows it at the decisive choice; with none, how often it guesses it.
        gold_first = sum(
            bool(e.steps) and e.steps[0].executed_action == first_gold[(e.task, e.variation)] for e in episodes
        )
        print(
            f"{'':29s} valid actions {100 * counts.valid_share():.1f}% "
            f"({counts.valid}/{counts.actions}); first action = the gold path's "
            f"{100 * gold_first / len(episodes):.0f}% ({gold_first}/{len(episodes)})"
        )
        print(f"{'':29s} rooms visited: {rooms_line(rooms, 5)}")
        print(f"{'':29s} invalid as written: {counts.invalid_line(4)}")
        print(f"{'':29s} {counts.go_to_line()}")
    writer_check(
        config,
        model,
        tokenizer,
        settings,
        [(t, v) for t, v in pairs if t in config.env.tasks],
        args.writer_samples,
        args.reflections,
    )


if __name__ == "__main__":
    main()
