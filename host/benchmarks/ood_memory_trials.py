"""The paper's out-of-distribution test, paired: memory trials against the same trials without memory.

    .venv/bin/python host/benchmarks/ood_memory_trials.py --seeds 900,901 [--model builtin]
        [--trials 10] [--variations 20] [--preset builtin] [--out docs/bench/r9-ood-memory/results.json]
        [--resume] [key=value ...]

No weight update. For every evaluation seed the policy plays the held-out kind (`repair-radio`,
its held-out variations) for `--trials` rounds twice, from the same generator seed: `memory`
(`memory_trials`, as `empo2-host eval`: trial 1 with an empty memory, then the policy's own tips
of every earlier trial in a fresh memory) and `memory-free` (`memory_trials(with_memory=False)`:
the same rounds, no tips written or read). Trial 1 is therefore the same in both arms; the
difference at trial t ≥ 2 is what memory adds. Both arms at the preset's evaluation temperature;
overrides after the options apply to the preset (e.g. the prompt shape SmolLM2's warm start was
trained with: policy.history_steps=3 policy.observation_words=50).

--out is rewritten after every seed (both arms of a seed, so a seed is never half there) with
one row per (seed, arm) — `success_by_trial`, `score_by_trial`, `seconds`, `cpu` — and a summary:
each arm's mean curve, and memory − memory-free paired on the seed (`paired_summary`) for
success and score at the last trial and averaged over trials 2..T, with the relative gain
(memory − memory-free) / memory-free. `--resume` keeps --out's seeds when it was run with the
same settings and plays only the missing ones.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from empo2.atomic import atomic_write_json  # noqa: E402
from empo2.bench.provenance import cpu_model, weights_sha256  # noqa: E402
from empo2.bench.stats import paired_summary  # noqa: E402
from empo2.config import ConfigError, load_config  # noqa: E402
from empo2.envs.builtin.tasks import out_of_distribution_tasks  # noqa: E402

MEMORY_ARM, FREE_ARM = "memory", "memory-free"
ARMS = (MEMORY_ARM, FREE_ARM)


def settings_of(args, model_path: str) -> dict:
    """What a resumed --out must share with this invocation."""
    return {
        "model": args.model,
        "policy_sha256": weights_sha256(model_path),
        "preset": args.preset,
        "overrides": args.overrides,
        "trials": args.trials,
        "variations": args.variations,
    }


def per_seed_metrics(row: dict) -> dict:
    """A row's summary metrics: success and score at the last trial, and averaged over trials
    2..T (those memory can change; trial 1 is the same in both arms)."""
    out = {}
    for name in ("success", "score"):
        curve = row[f"{name}_by_trial"]
        later = curve[1:] or curve
        out[f"{name}_last"] = curve[-1]
        out[f"{name}_later_mean"] = statistics.fmean(later)
    return out


def summarize(rows: list[dict], trials: int) -> dict:
    runs = [{"method": r["arm"], "seed": r["seed"], **per_seed_metrics(r)} for r in rows]
    summary: dict = {"curves": {}, "comparisons": {}}
    for arm in ARMS:
        mine = [r for r in rows if r["arm"] == arm]
        summary["curves"][arm] = {
            name: [statistics.fmean(r[f"{name}_by_trial"][t] for r in mine) if mine else None for t in range(trials)]
            for name in ("success", "score")
        }
    for metric in ("success_last", "success_later_mean", "score_last", "score_later_mean"):
        s = paired_summary(runs, MEMORY_ARM, FREE_ARM, metric)
        base = s["baseline_mean"]
        relative = (s["mean_difference"] / base) if s["seeds"] and base else None
        # The denominator is taken as known: the interval of the difference, scaled.
        s["relative_gain"] = relative
        s["relative_gain_t95"] = [x / base for x in s["t95"]] if relative is not None else None
        summary["comparisons"][metric] = s
    return summary


def play_seed(model, tokenizer, config, env, seed: int, trials: int, variations: int, embedder) -> list[dict]:
    from empo2.training.evaluation import memory_trials
    from empo2.training.rollout import RolloutSettings

    settings = RolloutSettings.from_config(config, env, train=False)
    pairs = [(t, v) for t in out_of_distribution_tasks() for v in env.variations(t, "test")[:variations]]
    rows = []
    for arm in ARMS:
        clock = time.perf_counter()
        result = memory_trials(
            model,
            tokenizer,
            config.env,
            pairs,
            trials,
            settings,
            config.policy.max_tip_tokens,
            embedder,
            seed,
            with_memory=arm == MEMORY_ARM,
        )
        rows.append(
            {
                "seed": seed,
                "arm": arm,
                "episodes_per_trial": len(pairs),
                "success_by_trial": result.success,
                "score_by_trial": result.score,
                "seconds": round(time.perf_counter() - clock, 1),
            }
        )
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", required=True, help="comma-separated evaluation seeds")
    parser.add_argument("--model", default="builtin", help="'builtin', a packaged model's name or a folder")
    parser.add_argument("--preset", default="builtin", help="the preset whose env and policy settings apply")
    parser.add_argument("--trials", type=int, default=10)
    parser.add_argument("--variations", type=int, default=20, help="held-out variations of the kind")
    parser.add_argument("--out", default="docs/bench/r9-ood-memory/results.json")
    parser.add_argument(
        "--resume", action="store_true", help="keep --out's seeds (same settings) and play only the missing ones"
    )
    parser.add_argument("overrides", nargs="*", help="key=value overrides of the preset")
    args = parser.parse_args()
    try:
        seeds = [int(s) for s in args.seeds.split(",") if s.strip()]
    except ValueError:
        print(f"ood_memory_trials: --seeds must be comma-separated integers, got {args.seeds!r}.", file=sys.stderr)
        return 2
    if not seeds or args.trials < 2 or args.variations < 1:
        print(
            "ood_memory_trials: give at least one seed, --trials of at least 2 and --variations of at least 1.",
            file=sys.stderr,
        )
        return 2
    try:
        config = load_config(args.preset, args.overrides)
    except ConfigError as error:
        print(f"ood_memory_trials: {error}", file=sys.stderr)
        return 2

    import torch

    from empo2.envs.registry import make_env
    from empo2.memory.embedding import SentenceEmbedder
    from empo2.policy.model import load_policy
    from empo2.training.trainer import resolve_model

    model_path = resolve_model(args.model)
    settings = settings_of(args, model_path)
    out = Path(args.out)
    rows: list[dict] = []
    if args.resume and out.exists():
        kept = json.loads(out.read_text())
        if any(kept.get(k) != v for k, v in settings.items()):
            print(f"ood_memory_trials: {out} was run with other settings; it cannot be resumed.", file=sys.stderr)
            return 2
        rows = kept["rows"]
    done = {r["seed"] for r in rows}
    cpu = cpu_model()
    env = make_env(config.env)
    torch.set_num_threads(1)
    model, tokenizer = load_policy(model_path, device="cpu")
    model.eval()
    embedder = SentenceEmbedder()
    for seed in seeds:
        if seed in done:
            continue
        rows += [
            {**row, "cpu": cpu}
            for row in play_seed(model, tokenizer, config, env, seed, args.trials, args.variations, embedder)
        ]
        out.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_json(out, {**settings, "rows": rows, "summary": summarize(rows, args.trials)})
        print(json.dumps({r["arm"]: r["success_by_trial"] for r in rows[-2:]} | {"seed": seed}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
