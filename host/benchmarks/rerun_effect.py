"""Does editing a tip and rerunning the off-policy update teach the policy?

    .venv/bin/python host/benchmarks/rerun_effect.py [--seeds 0,1,2] [--parent-iterations 1]
        [--episodes 8] [--iterations 3] [--eval-episodes 8] [--variations 2]
        [--out docs/bench/rerun-effect/rerun.json]
    .venv/bin/python host/benchmarks/rerun_effect.py --merge a.json b.json --out docs/bench/rerun-effect/rerun.json
    .venv/bin/python host/benchmarks/rerun_effect.py --conditions correct-contrast,none-contrast,correct \
        --seeds 700,701 --out docs/bench/r7-contrast/rerun.json [--resume]

For every seed: train a parent on the built-in default (the `builtin` preset, `seed` set, the
parent's evaluation off) for `--parent-iterations`; among the training variations its memory
holds policy tips for, pick the `--variations` with the lowest memory-free success at that
checkpoint; then, each on its own copy of the parent, (a) `correct`: a person rewrites the
variation's best tip as the gold one ("the <item> was in the <container> in the <room> . it
worked . score 100", the built-in worlds' own success-tip form) and deletes its other tips;
(b) `wrong`: the same, naming a room and container where the item is not; (c) `none`: no edit.
`correct-contrast` and `none-contrast` are `correct` and `none` rerun with half of each group
without tips and the tip-free off-policy denominator (`CONTRAST`, set in the copy's config).
Each copy is rerun with the same N and K (`rerun.rerun`, the trainer's own code path) and its
memory-free success on the chosen variations is measured before and after with the same seeds.
`--conditions` picks which (default r5's three).

Prints one JSON line per (seed, condition) and writes them all to --out: `seed`, `condition`,
`before`, `after` (mean memory-free success over the chosen variations), `variations`, and the
per-variation numbers; the summary adds, per condition, the mean gain over (seed, variation)
cells with its t-interval and percentile bootstrap, and each pair of `PAIRS` whose conditions
ran paired on the cell (and on the seed, its cells' mean). --out is rewritten after every row:
a cut-short bench keeps its rows, and `--resume` runs only the (seed, condition) rows it lacks.
The figures are what this machine measured; nothing is tuned to them.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from empo2 import metric_keys as metric  # noqa: E402
from empo2.atomic import atomic_write_json  # noqa: E402
from empo2.bench.stats import bootstrap_ci, t_interval  # noqa: E402
from empo2.config import load_config  # noqa: E402
from empo2.envs.registry import make_env  # noqa: E402
from empo2.memory.embedding import SentenceEmbedder  # noqa: E402
from empo2.memory.store import MemoryStore  # noqa: E402
from empo2.modes import MEMORY, MEMORY_FREE  # noqa: E402
from empo2.policy.demos import render_tip  # noqa: E402
from empo2.rerun.branch import create_branch  # noqa: E402
from empo2.rerun.runner import RerunSettings, evaluate_pairs, rerun  # noqa: E402
from empo2.run_folder.folder import RunFolder  # noqa: E402
from empo2.training.trainer import Trainer  # noqa: E402

# Each condition: the edit made in the parent's copy, and the copy's config overrides.
CONTRAST = ("algo.memory_contrast=half", "algo.off_policy_old_logprob=without_tips")
CONDITIONS = {
    "correct": ("correct", ()),
    "wrong": ("wrong", ()),
    "none": ("none", ()),
    "correct-contrast": ("correct", CONTRAST),
    "none-contrast": ("none", CONTRAST),
}
# The paired differences reported when both conditions ran: (condition, baseline).
PAIRS = (("correct", "none"), ("wrong", "none"), ("correct-contrast", "none-contrast"), ("correct-contrast", "correct"))
# What each rerun iteration's metrics say about its contrast: success with and without tips,
# the groups whose returns were all equal (no advantage), the advantage left.
ITERATION_KEYS = (
    metric.rollout_success(metric.mode_segment(MEMORY)),
    metric.rollout_success(metric.mode_segment(MEMORY_FREE)),
    metric.REWARD_FLAT_GROUP_SHARE,
    metric.UPDATE_PREFIX + "advantage_abs_mean",
    metric.UPDATE_PREFIX + "masked_fraction",
)
SETTINGS = ("preset", "parent_iterations", "parent_overrides", "episodes", "iterations", "eval_episodes")


def train_parent(root: Path, seed: int, iterations: int, overrides: list[str], embedder) -> RunFolder:
    config = load_config("builtin", [f"seed={seed}", f"iterations={iterations}", "eval.every=0", *overrides])
    config.root, config.name = str(root), f"parent-seed{seed}"
    folder = RunFolder.create(root, config.name, config.to_dict())
    trainer = Trainer(config, folder, embedder=embedder)
    trainer.run()
    trainer.memory.close()
    trainer.close()
    return folder


def tipped_variations(folder: RunFolder, embedder) -> list[str]:
    config = load_config(folder.config())
    with MemoryStore.open(folder.memory_path, embedder, capacity=config.memory.capacity) as store:
        keys = [k for k in store.variation_keys() if store.count(k)]
    return sorted(keys)


def screen(folder: RunFolder, keys: list[str], eval_episodes: int, seed: int, embedder) -> dict:
    """Memory-free success of each key at the parent's checkpoint (on a scratch branch)."""
    scratch = folder.path.parent / "screening"
    branch = create_branch(folder, root=scratch)
    trainer = Trainer(load_config(branch.config()), branch, embedder=embedder)
    trainer.start(resume=True)
    pairs = [(k.rsplit("/", 1)[0], int(k.rsplit("/", 1)[1])) for k in keys]
    result = evaluate_pairs(trainer, pairs, RerunSettings(eval_episodes=eval_episodes, seed=seed))
    trainer.memory.close()
    trainer.close()
    shutil.rmtree(scratch)
    return {k: v["success"] for k, v in result.items()}


def tip_texts(config, key: str) -> dict[str, str]:
    """The gold tip and a wrong one (a room and container where the item is not)."""
    task, variation = key.rsplit("/", 1)
    env = make_env(config.env)
    env.reset(task, int(variation))
    w = env.world
    wrong_room = next(r for r in w.rooms if r not in (w.item_room, w.target_room))
    return {
        "correct": render_tip(w.item, 100, (w.container_of[w.item_room], w.item_room), [], w.target),
        "wrong": render_tip(w.item, 100, (w.container_of[wrong_room], wrong_room), [], w.target),
    }


def configure(folder: RunFolder, overrides: tuple[str, ...]) -> None:
    """The copy's config with `overrides` (validated as any config): the rerun reads its run's."""
    if overrides:
        atomic_write_json(folder.path / "config.json", load_config(folder.config(), list(overrides)).to_dict())


def edit(folder: RunFolder, keys: list[str], condition: str, embedder) -> None:
    """A person's edit in the parent copy: the best tip rewritten, the variation's others deleted."""
    if condition == "none":
        return
    config = load_config(folder.config())
    with MemoryStore.open(folder.memory_path, embedder, capacity=config.memory.capacity) as store:
        for key in keys:
            tips, _ = store.list_tips(variation_key=key, limit=10_000)
            best = max(tips, key=lambda t: (t.score, t.n_entries))
            store.update(best.id, tip_texts(config, key)[condition], best.version, author="bench")
            for tip in tips:
                if tip.id != best.id:
                    store.delete(tip.id, tip.version, author="bench")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", default="0,1,2")
    parser.add_argument("--parent-iterations", type=int, default=1)
    parser.add_argument(
        "--parent-overrides", default="", help="comma-separated key=value for the parent, e.g. algo.batch_tasks=2"
    )
    parser.add_argument("--episodes", type=int, default=8, help="N per variation and iteration")
    parser.add_argument("--iterations", type=int, default=3, help="K")
    parser.add_argument("--eval-episodes", type=int, default=8)
    parser.add_argument("--variations", type=int, default=2, help="chosen variations per seed")
    parser.add_argument("--root", default=None, help="where the bench's run folders go")
    parser.add_argument("--out", default="docs/bench/rerun-effect/rerun.json")
    parser.add_argument(
        "--conditions", default="correct,wrong,none", help=f"comma-separated, of {', '.join(CONDITIONS)}"
    )
    parser.add_argument(
        "--resume", action="store_true", help="keep --out's rows (same settings) and run only the missing ones"
    )
    parser.add_argument(
        "--merge",
        nargs="+",
        metavar="PART",
        help="instead of running: the rows of several runs' outputs (seeds run as "
        "separate processes, one core each) written as one --out",
    )
    args = parser.parse_args()
    if args.merge:
        return merge(args)
    conditions = [c.strip() for c in args.conditions.split(",") if c.strip()]
    unknown = [c for c in conditions if c not in CONDITIONS]
    if unknown or not conditions:
        print(
            f"rerun_effect: unknown condition(s) {', '.join(unknown) or '(none given)'} "
            f"(known: {', '.join(CONDITIONS)}).",
            file=sys.stderr,
        )
        return 2
    rows = []
    if args.resume and Path(args.out).exists():
        kept = json.loads(Path(args.out).read_text())
        if any(kept[k] != v for k, v in settings_of(args).items()):
            print(f"rerun_effect: {args.out} was run with other settings; it cannot be resumed.", file=sys.stderr)
            return 2
        rows = kept["rows"]
    done = {(r["seed"], r["condition"]) for r in rows}
    # Without --root the runs go to a fresh folder of the system's temporary place.
    root = Path(args.root or tempfile.mkdtemp(prefix="empo2-rerun-bench-"))
    embedder = None
    for seed in [int(s) for s in args.seeds.split(",")]:
        missing = [c for c in conditions if (seed, c) not in done]
        if not missing:
            continue
        embedder = embedder or SentenceEmbedder()
        clock = time.perf_counter()
        overrides = [o for o in args.parent_overrides.split(",") if o.strip()]
        parent = train_parent(root / f"seed{seed}" / "parent", seed, args.parent_iterations, overrides, embedder)
        keys = tipped_variations(parent, embedder)
        success = screen(parent, keys, args.eval_episodes, seed, embedder)
        chosen = sorted(keys, key=lambda k: (success[k], k))[: args.variations]
        print(
            f"seed {seed}: parent in {time.perf_counter() - clock:.0f} s; tipped {success}; chosen {chosen}",
            file=sys.stderr,
            flush=True,
        )
        for condition in missing:
            clock = time.perf_counter()
            copy = root / f"seed{seed}" / condition / parent.path.name
            shutil.copytree(parent.path, copy)
            tip, overrides = CONDITIONS[condition]
            configure(RunFolder(copy), overrides)
            edit(RunFolder(copy), chosen, tip, embedder)
            result = rerun(
                RunFolder(copy),
                RerunSettings(
                    variations=chosen,
                    episodes=args.episodes,
                    iterations=args.iterations,
                    eval_episodes=args.eval_episodes,
                    seed=seed,
                ),
                embedder=embedder,
            )
            per = {c["variation"]: {"before": c["before"], "after": c["after"]} for c in result["comparison"]}
            row = {
                "seed": seed,
                "condition": condition,
                "before": sum(v["before"] for v in per.values()) / len(per),
                "after": sum(v["after"] for v in per.values()) / len(per),
                "variations": per,
                "screened_success": {k: success[k] for k in chosen},
                "tips": {e["variation_key"]: e["after"] for e in result["tips"] if e["kind"] == "update"},
                "kl_to_checkpoint": result["kl_to_checkpoint"],
                "overrides": list(overrides),
                "iterations": [
                    {k: m.get(k) for k in ITERATION_KEYS} for m in RunFolder(Path(result["path"])).metrics()
                ],
                "seconds": round(time.perf_counter() - clock, 1),
            }
            rows.append(row)
            print(json.dumps(row), flush=True)
            write(Path(args.out), args, rows)  # after every row: a cut-short bench keeps its rows
    print(json.dumps(write(Path(args.out), args, rows)["mean_gain"]))
    return 0


def settings_of(args) -> dict:
    return {
        "preset": "builtin",
        "parent_iterations": args.parent_iterations,
        "parent_overrides": args.parent_overrides,
        "episodes": args.episodes,
        "iterations": args.iterations,
        "eval_episodes": args.eval_episodes,
    }


def merge(args) -> int:
    parts = [json.loads(Path(p).read_text()) for p in args.merge]
    settings = SETTINGS
    if any(tuple(part[k] for k in settings) != tuple(parts[0][k] for k in settings) for part in parts):
        print("rerun_effect: the parts were run with different settings; they cannot be merged.", file=sys.stderr)
        return 2
    for key in ("parent_iterations", "parent_overrides", "episodes", "iterations", "eval_episodes"):
        setattr(args, key, parts[0][key])
    rows = sorted(
        (row for part in parts for row in part["rows"]),
        key=lambda r: (r["seed"], list(CONDITIONS).index(r["condition"])),
    )
    args.seeds = ",".join(str(s) for s in sorted({r["seed"] for r in rows}))
    print(json.dumps(write(Path(args.out), args, rows)["mean_gain"]))
    return 0


def cell_gains(rows: list[dict], condition: str) -> list[float]:
    return [v["after"] - v["before"] for r in rows if r["condition"] == condition for v in r["variations"].values()]


def paired_cells(rows: list[dict], condition: str, baseline: str) -> dict:
    gain = {
        (r["seed"], key): v["after"] - v["before"]
        for r in rows
        for key, v in r["variations"].items()
        if r["condition"] == condition
    }
    base = {
        (r["seed"], key): v["after"] - v["before"]
        for r in rows
        for key, v in r["variations"].items()
        if r["condition"] == baseline
    }
    cells = [cell for cell in sorted(gain) if cell in base]
    differences = [gain[cell] - base[cell] for cell in cells]
    # The same differences averaged within a seed (its cells share one parent): the seed as unit.
    by_seed: dict[int, list[float]] = {}
    for (seed, _), difference in zip(cells, differences):
        by_seed.setdefault(seed, []).append(difference)
    per_seed = [sum(d) / len(d) for d in by_seed.values()]
    return {
        "cells": len(differences),
        "mean": sum(differences) / len(differences) if differences else None,
        "ci95": bootstrap_ci(differences),
        "t95": t_interval(differences),
        "seeds": len(per_seed),
        "seed_t95": t_interval(per_seed),
    }


def write(out: Path, args, rows: list[dict]) -> dict:
    ran = [c for c in CONDITIONS if any(r["condition"] == c for r in rows)]
    summary = {
        **settings_of(args),
        "seeds": args.seeds,
        "rows": rows,
        "mean_gain": {
            c: sum(r["after"] - r["before"] for r in rows if r["condition"] == c)
            / max(1, sum(r["condition"] == c for r in rows))
            for c in ran
        },
        # The unit is a (seed, variation) cell: its after - before. The t-interval over cells
        # decides; the percentile bootstrap (resampled with replacement) is reported beside it.
        "gain_t95": {c: t_interval(cell_gains(rows, c)) for c in ran},
        "gain_ci95": {c: bootstrap_ci(cell_gains(rows, c)) for c in ran},
        # Paired on the cell: a condition's gain minus its baseline's gain of the same cell
        # (r5's keys kept: correct_minus_none, wrong_minus_none).
        **{f"{a}_minus_{b}".replace("-", "_"): paired_cells(rows, a, b) for a, b in PAIRS if a in ran and b in ran},
    }
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(summary, indent=2) + "\n")
    return summary


if __name__ == "__main__":
    sys.exit(main())
