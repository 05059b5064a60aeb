"""How selective is retrieval under each memory key (memory.key = step, episode)?

    .venv/bin/python host/benchmarks/memory_key_selectivity.py RUN_FOLDER [--iterations N]
    .venv/bin/python host/benchmarks/memory_key_selectivity.py --simulate ROUNDS [--preset builtin-bench] \\
        [KEY=VALUE ...]

The episodes (a run folder's recorded ones, or scripted built-in episodes with truthful tips:
the gold path a quarter of the time, else a random search that opens containers and takes
nothing) are replayed in order into a fresh memory per key, exactly as training stores them
(`rollout.tip_entries`): each iteration's steps first query the memory as it stood before the
iteration, then the iteration's tips are stored. Every step is a query, whichever mode the run
played it in. Reported per key:

- `cosine`: quantiles (10%, 50%, 90%) of the cosine of each query to each entry of its own
  variation, and `kept_by_threshold`: the share of those pairs above each threshold (the
  config's `memory.similarity_threshold` is the one training uses). A threshold that keeps
  nearly every pair filters nothing.
- `retrieval`: with the config's threshold and top_k, the share of steps shown a tip, the tips
  shown per step, and the share of shown tips written after a successful episode.
- `same_variation`: each task's variations pooled in one buffer, the share of retrieved tips
  from the query's own variation, beside `chance` (its variation's share of the pool's tips).
  Training retrieves within the variation; a key that carries what tells variations apart
  retrieves its own variation's tips far above chance.

Cosines are float32 products of the stored unit keys (the store's exact fixed-point product
differs by < 5e-6). The report is one JSON object on stdout (`--out` writes it to a file too).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import random
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from empo2.config import CHOICES, ConfigError, load_config  # noqa: E402
from empo2.envs.base import SCORE_MAX  # noqa: E402
from empo2.envs.builtin.env import BuiltinEnv  # noqa: E402
from empo2.memory.store import MemoryStore  # noqa: E402
from empo2.policy.prompting import step_user_text  # noqa: E402
from empo2.policy.scripted_writer import scripted_tip  # noqa: E402
from empo2.run_folder.folder import RunFolder, RunFolderError  # noqa: E402
from empo2.training.rollout import MEMORY_FREE, Episode, RolloutSettings, StepRecord, tip_entries  # noqa: E402

KEYS = CHOICES["memory.key"]
THRESHOLDS = (0.3, 0.5, 0.7, 0.8, 0.9)
GOLD_SHARE = 0.25  # simulated episodes that take the gold path (succeed)


def _step(user_text: str, observation: str, executed: str, raw: str | None = None) -> StepRecord:
    """What tip_entries reads of a step (the raw text: for policy.history_action=raw)."""
    return StepRecord(
        observation=observation,
        user_text=user_text,
        tips=[],
        tip_ids=[],
        prompt_ids=[],
        prompt_ids_no_tips=[],
        action=raw or executed,
        executed_action=executed,
        action_ids=[],
        behaviour_logprobs=[],
    )


def recorded_iterations(folder: RunFolder, limit: int) -> list[list[tuple[Episode, list[str]]]]:
    """The run's episodes with tips, iteration by iteration: (episode, observations after each
    step), rebuilt from trajectories/iter-*.jsonl."""
    iterations = []
    for path in sorted(folder.path.glob("trajectories/iter-*.jsonl"))[: limit or None]:
        played = []
        for line in path.read_text().splitlines():
            r = json.loads(line)
            ep = Episode(
                id=r["id"],
                task=r["task"],
                variation=r["variation"],
                group=r["group"],
                rollout_mode=r["rollout_mode"],
                description=r["description"],
                final_score=r["return"],
                success=r["success"],
                tip=r.get("tip") or "",
                steps=[
                    _step(s["prompt_no_tips"], s["observation"], s["executed_action"], s["action"]) for s in r["steps"]
                ],
            )
            if ep.tip and ep.steps:
                played.append((ep, [s["next_observation"] for s in r["steps"]]))
        iterations.append(played)
    return iterations


def simulated_iterations(config, rounds: int, seed: int) -> list[list[tuple[Episode, list[str]]]]:
    """`rounds` iterations of one scripted episode per training (task, variation), tips from
    `scripted_tip` (what a truthful writer says)."""
    rng = random.Random(seed)
    env = BuiltinEnv(max_steps=config.env.max_steps)
    variations = config.env.train_variations
    pairs = [(t, v) for t in config.env.tasks for v in (variations or env.variations(t, "train"))]
    p = config.policy
    iterations = []
    for r in range(rounds):
        played = []
        for g, (task, variation) in enumerate(pairs):
            observation, info = env.reset(task, variation, seed=g)
            ep = Episode(
                id=f"sim{r}-{g}",
                task=task,
                variation=variation,
                group=g,
                rollout_mode=MEMORY_FREE,
                description=info.task_description,
            )
            w = env.world
            if rng.random() < GOLD_SHARE:
                plan = list(w.gold_actions())
            else:
                rooms = [room for room in w.rooms if room != "hallway"]
                plan = [
                    a
                    for room in rng.sample(rooms, len(rooms))
                    for a in (f"go to {room}", f"open {w.container_of[room]}")
                ]
            after: list[str] = []
            for action in plan:
                user = step_user_text(
                    ep.description, ep.turns(after), observation, p.history_steps, p.observation_words
                )
                seen = observation
                observation, _, done, info = env.step(action)
                ep.steps.append(_step(user, seen, info.corrected_action or action))
                after.append(observation)
                if done:
                    break
            ep.final_score, ep.success = info.score, info.success
            ep.tip = scripted_tip(task, variation, [s.executed_action for s in ep.steps], ep.final_score)
            played.append((ep, after))
        iterations.append(played)
    return iterations


def selectivity(iterations, settings: RolloutSettings, embedder, capacity: int, thresholds=THRESHOLDS) -> dict:
    """The figures of the module docstring for one memory key (settings.memory_key); `capacity`
    is the entries per variation (memory.capacity), the pooled buffers hold 20 variations' worth."""
    own = MemoryStore(embedder, capacity=capacity)  # per variation, as training files tips
    pooled = MemoryStore(embedder, capacity=20 * capacity)  # per task: every variation in one buffer
    succeeded: dict[str, bool] = {}  # tip id (own store) -> written after a success
    pool: dict[str, dict[str, int]] = {}  # task -> tip id (pooled store) -> its variation
    cosines: list[np.ndarray] = []
    shown, with_tips, from_success, same, chance = [], [], [], [], []
    for played in iterations:
        for ep, _ in played:
            queries = [s.user_text for s in ep.steps]
            entries = own.entries(ep.variation_key)
            if entries:
                keys = embedder.encode([e["key_text"] for e in entries])
                cosines.append((embedder.encode(queries) @ keys.T).ravel())
            for hits in own.retrieve(ep.variation_key, queries, settings.similarity_threshold, settings.top_k):
                tips = list(dict.fromkeys(h.tip_id for h in hits))
                shown.append(len(tips))
                with_tips.append(bool(tips))
                from_success += [succeeded[t] for t in tips]
            variation_of = pool.setdefault(ep.task, {})
            for hits in pooled.retrieve(ep.task, queries, settings.similarity_threshold, settings.top_k):
                tips = list(dict.fromkeys(h.tip_id for h in hits))
                same += [variation_of[t] == ep.variation for t in tips]
                if tips:
                    chance.append(sum(v == ep.variation for v in variation_of.values()) / len(variation_of))
        for ep, after in played:
            entries = tip_entries(ep, after, settings)
            # A text already stored comes back as the first tip that had it: it keeps its origin.
            tip = own.add_episode_tip(ep.variation_key, ep.tip, entries, ep.final_score)
            succeeded.setdefault(tip.id, ep.final_score >= SCORE_MAX)
            tip = pooled.add_episode_tip(ep.task, ep.tip, entries, ep.final_score)
            pool[ep.task].setdefault(tip.id, ep.variation)
    pairs = np.concatenate(cosines) if cosines else np.zeros(0, dtype=np.float32)

    def mean(values) -> float | None:
        return round(float(np.mean(values)), 4) if len(values) else None

    return {
        "entries": sum(len(own.entries(k)) for k in own.variation_keys()),
        "tips": own.count(),
        "cosine": {f"q{q}": round(float(np.quantile(pairs, q / 100)), 4) for q in (10, 50, 90)} if len(pairs) else {},
        "kept_by_threshold": {str(t): mean(pairs > t) for t in thresholds},
        "retrieval": {
            "threshold": settings.similarity_threshold,
            "top_k": settings.top_k,
            "steps_with_tips": mean(with_tips),
            "tips_per_step": mean(shown),
            "success_share": mean(from_success),
        },
        "same_variation": {"share": mean(same), "chance": mean(chance)},
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--iterations", type=int, default=0, help="the run's first N iterations only (0: all)")
    parser.add_argument(
        "--simulate",
        type=int,
        default=0,
        metavar="ROUNDS",
        help="scripted built-in episodes instead: one per training variation per round",
    )
    parser.add_argument("--preset", default="builtin-bench", help="the simulation's worlds (default %(default)s)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, help="also write the report here")
    parser.add_argument(
        "rest", nargs="*", metavar="RUN_FOLDER | KEY=VALUE", help="a run folder, or with --simulate config overrides"
    )
    args = parser.parse_args(argv)
    if not args.simulate and len(args.rest) != 1:
        parser.error("name one run folder, or --simulate ROUNDS")
    try:
        if not args.simulate:
            folder = RunFolder.open(Path(args.rest[0]))
            config = load_config(folder.config())
            iterations = recorded_iterations(folder, args.iterations)
            source = {"run": folder.path.name, "iterations": len(iterations)}
        else:
            config = load_config(args.preset, args.rest)
            if config.env.name != "builtin":
                raise ConfigError("the simulation plays the built-in worlds only (env.name=builtin)")
            iterations = simulated_iterations(config, args.simulate, args.seed)
            source = {"simulated": args.simulate, "preset": args.preset, "overrides": args.rest}
    except (ConfigError, RunFolderError, OSError) as error:
        print(f"memory_key_selectivity: {error}", file=sys.stderr)
        return 2
    from empo2.memory.embedding import SentenceEmbedder

    embedder = SentenceEmbedder()
    base = RolloutSettings.from_config(config, None, train=True)
    report = {
        **source,
        "episodes": sum(len(p) for p in iterations),
        "keys": {
            key: selectivity(iterations, dataclasses.replace(base, memory_key=key), embedder, config.memory.capacity)
            for key in KEYS
        },
    }
    text = json.dumps(report, indent=2)
    print(text)
    if args.out is not None:
        args.out.write_text(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
