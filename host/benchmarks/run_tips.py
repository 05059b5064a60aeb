"""What are a built-in run's own tips worth? Two measurements of a finished (or stopped) run.

    .venv/bin/python host/benchmarks/run_tips.py RUN_FOLDER [--rollouts 8]

1. Accuracy of the tips (no model needed), in the first and the second half of the run's
   iterations: of the tips written after successful episodes, the share whose text names the
   room where the episode took the item ("the battery was in the locker in the workshop");
   of those written after failures, the share whose text claims a success. Memory ranks entries
   by their episode's score, so a score-100 tip that names the wrong room is shown first; a
   failure tip that says "score 100" is ranked low but read as a success. Beside them, the
   memory rollouts' success in the first and the second half of the run's memory iterations,
   and the share of the actions the policy generated that were not valid (the world corrected
   them) in memory rollouts (tips in the prompt) and memory-free ones: a policy whose tip-reading
   decays under RL writes broken actions only when tips are shown ("open 100 100"). What the
   invalid actions were, per mode: by verb, the most written, and the share that repeat an
   action the step's tip block showed.
2. With `--rollouts R` (R > 0): memory-augmented rollouts of the run's training variations, R
   per variation at the training temperature, by its newest checkpoint and by the warm start,
   each with no memory, with the run's own memory as it stands, and with the gold path's
   success tip (probe_tips.py's). A policy that follows a gold tip and fails with its own memory
   is misled by its tips; one that fails with both no longer reads tips.

Built-in worlds only: "the room where the item was taken" is read off their actions.
"""

from __future__ import annotations

import argparse
import collections
import json
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from empo2.config import ConfigError, load_config  # noqa: E402
from empo2.modes import ROLLOUT_MODES  # noqa: E402
from empo2.run_folder.folder import RunFolder, RunFolderError  # noqa: E402


def taken_in(steps: list[dict]) -> str | None:
    """The room the episode was in when it took something (None: it never took anything)."""
    room = None
    for step in steps:
        action = step["executed_action"]
        if action.startswith("go to "):
            room = action[len("go to ") :]
        elif action.startswith("take "):
            return room
    return None


def _halves(judged: dict[int, list[bool]], last: int) -> list[tuple[int, int]]:
    halves = (
        [x for i, v in judged.items() if 2 * i <= last for x in v],
        [x for i, v in judged.items() if 2 * i > last for x in v],
    )
    return [(sum(h), len(h)) for h in halves]


def recorded_episodes(folder: RunFolder) -> list[dict]:
    """Every recorded episode of the run, iteration by iteration; read once, measured three ways."""
    return [
        json.loads(line)
        for path in sorted(folder.path.glob("trajectories/iter-*.jsonl"))
        for line in path.read_text().splitlines()
    ]


def tip_accuracy(episodes: list[dict]) -> dict[str, list[tuple[int, int]]]:
    """Per half of the iterations, (count, judged): success tips that name the room where the
    item was taken, and failure tips whose text claims a success ("it worked", "score 100")."""
    right_room: dict[int, list[bool]] = collections.defaultdict(list)
    false_claim: dict[int, list[bool]] = collections.defaultdict(list)
    last = 0
    for episode in episodes:
        tip, iteration = episode.get("tip"), episode["iteration"]
        last = max(last, iteration)
        if not tip:
            continue
        if not episode.get("success"):
            false_claim[iteration].append("it worked" in tip or "score 100" in tip)
        elif room := taken_in(episode["steps"]):
            right_room[iteration].append(f"in the {room} ." in tip)
    return {
        "success tips naming the room the item was taken in": _halves(right_room, last),
        "failure tips claiming a success": _halves(false_claim, last),
    }


def memory_success_by_half(folder: RunFolder) -> list[float | None]:
    """Mean success of the memory rollouts (`rollout/memory/success`) over the first and the
    second half of the run's memory iterations (None: no memory iteration in that half). The
    collapse that bench b1 measured: a fall to 0% in the second half while memory-free success rises."""
    rates = [m["rollout/memory/success"] for m in folder.metrics() if "rollout/memory/success" in m]
    halves = (rates[: len(rates) // 2], rates[len(rates) // 2 :])  # an odd middle goes second
    return [sum(h) / len(h) if h else None for h in halves]


def invalid_actions_by_half(episodes: list[dict]) -> dict[str, list[tuple[int, int]]]:
    """Per rollout mode and half of the iterations, (actions the world had to correct, actions)."""
    invalid: dict[str, dict[int, list[bool]]] = collections.defaultdict(lambda: collections.defaultdict(list))
    last = 0
    for episode in episodes:
        last = max(last, episode["iteration"])
        invalid[episode["rollout_mode"]][episode["iteration"]] += [
            step["action"] != step["executed_action"] for step in episode["steps"]
        ]
    return {mode: _halves(invalid[mode], last) for mode in ROLLOUT_MODES}


def invalid_action_kinds(episodes: list[dict]) -> dict[str, dict]:
    """Per rollout mode, what the invalid actions were: counts by verb ("go to" as one), the
    actions written most often, and how many repeat an action shown in the step's tip block
    (a tip's action copied where it does not apply) beside those that do not."""
    kinds = {
        mode: {"verbs": collections.Counter(), "actions": collections.Counter(), "tip_action": 0}
        for mode in ROLLOUT_MODES
    }
    for episode in episodes:
        kind = kinds[episode["rollout_mode"]]
        for step in episode["steps"]:
            action = step["action"]
            if action == step["executed_action"]:
                continue
            words = action.split()
            kind["verbs"][" ".join(words[:2]) if words[:2] == ["go", "to"] else (words[0] if words else "(empty)")] += 1
            kind["actions"][action] += 1
            kind["tip_action"] += action in (step.get("tip_actions") or [])
    return kinds


def _shares(counter: collections.Counter, top: int, quote: bool = False) -> str:
    total = sum(counter.values()) or 1
    return ", ".join(f"{repr(k) if quote else k} {100 * n / total:.0f}%" for k, n in counter.most_common(top)) or "none"


def rollouts(folder: RunFolder, config, repeats: int) -> None:
    from empo2.envs.registry import make_env
    from empo2.export.plain import plain_model_folder
    from empo2.memory.embedding import SentenceEmbedder
    from empo2.memory.store import MemoryStore
    from empo2.policy.model import load_policy
    from empo2.training.rollout import RolloutSettings
    from empo2.training.trainer import resolve_model
    from probe_tips import play, probe_memories, rooms_line

    env = make_env(config.env)
    pairs = [(t, v) for t in config.env.tasks for v in (config.env.train_variations or env.variations(t, "train"))]
    embedder = SentenceEmbedder()
    scratch = Path(tempfile.mkdtemp(prefix="empo2-run-tips-"))
    shutil.copytree(folder.memory_path, scratch / "memory")  # the run's own log is left untouched
    memories = {
        "no memory": None,
        "own memory": MemoryStore.open(scratch / "memory", embedder),
        "gold tip": probe_memories(config, pairs, embedder)["success tip"],
    }
    latest = folder.latest_checkpoint()
    has_model = latest and json.loads((latest[1] / "trainer.json").read_text()).get("has_model")
    export = plain_model_folder(latest[1]) if has_model else (resolve_model(config.policy.model), None)
    settings = RolloutSettings.from_config(config, env, train=True)
    print(f"{len(pairs)} training variations x {repeats} rollouts per condition")
    for name, path in (
        (f"checkpoint {latest[0] if has_model else 0}", export[0]),
        ("warm start", resolve_model(config.policy.model)),
    ):
        model, tokenizer = load_policy(path)
        model.eval()
        for condition, memory in memories.items():
            episodes, rooms, counts = play(config, model, tokenizer, settings, pairs, repeats, memory)
            success = 100 * sum(e.success for e in episodes) / len(episodes)
            valid = 100 * counts.valid_share()
            print(
                f"{name:15s} {condition:10s} success {success:5.1f}%  valid actions {valid:5.1f}%  "
                f"rooms visited: {rooms_line(rooms, 4)}"
            )
    shutil.rmtree(scratch, ignore_errors=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("run", help="a run folder (e.g. .empo2/runs/<run-id>)")
    parser.add_argument("--rollouts", type=int, default=0, help="rollouts per variation and condition (0: none)")
    args = parser.parse_args()
    try:
        folder = RunFolder.open(Path(args.run))
        config = load_config(folder.config())
    except (RunFolderError, ConfigError, OSError, ValueError) as error:  # one sentence, no traceback
        print(f"run_tips: {error}", file=sys.stderr)
        return 2
    if config.env.name != "builtin":
        print(
            f"run_tips: {args.run} trained on {config.env.name}; this measure reads the built-in worlds' actions",
            file=sys.stderr,
        )
        return 2
    episodes = recorded_episodes(folder)
    for measure, halves in tip_accuracy(episodes).items():
        for half, (count, judged) in zip(("first", "second"), halves):
            share = f"{100 * count / judged:.0f}%" if judged else "–"
            print(f"{measure}, {half} half of the run: {count}/{judged} ({share})")
    for half, rate in zip(("first", "second"), memory_success_by_half(folder)):
        print(
            f"memory rollouts' success, {half} half of the memory iterations: "
            + (f"{100 * rate:.1f}%" if rate is not None else "–")
        )
    for mode, halves in invalid_actions_by_half(episodes).items():
        for half, (count, judged) in zip(("first", "second"), halves):
            share = f"{100 * count / judged:.1f}%" if judged else "–"
            print(f"invalid actions in {mode} rollouts, {half} half of the run: {count}/{judged} ({share})")
    for mode, kind in invalid_action_kinds(episodes).items():
        total = sum(kind["actions"].values())
        if total:
            print(
                f"invalid actions in {mode} rollouts, by verb: {_shares(kind['verbs'], 5)}; "
                f"a shown tip's action: {100 * kind['tip_action'] / total:.1f}%; "
                f"most written: {_shares(kind['actions'], 4, quote=True)}"
            )
    if args.rollouts > 0:
        rollouts(folder, config, args.rollouts)
    return 0


if __name__ == "__main__":
    sys.exit(main())
