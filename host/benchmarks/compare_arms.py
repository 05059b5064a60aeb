"""Any two arms of one or more bench results, paired by seed: the comparison a reader asks for
after the bench's own summary (which sets every arm against GRPO and EMPO² against the ablations).

    .venv/bin/python host/benchmarks/compare_arms.py RESULTS.json [RESULTS.json ...] \\
        --method "EMPO² (3 tips)" --baseline GRPO [--metrics train_success,held_out_success,auc]

Several files are one experiment run in parts (a confirmation on fresh seeds run in two
invocations): their runs are pooled, and the files must agree on what makes runs comparable
(preset, overrides, policy, budget, evaluation episodes and temperature); a seed that two files
both ran for one arm is refused rather than counted twice. Prints, per metric, the per-seed
differences, the paired mean difference with its 95% bootstrap CI (`empo2.bench.stats`, the bench's
own), and the ratio of the means; `--json` also writes them.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from empo2.bench.stats import paired_summary  # noqa: E402

# What two parts of one experiment must share; seeds and arms may differ (that is the point).
COMPARABLE = ("preset", "overrides", "policy", "env_step_budget", "eval_episodes", "eval_temperature")


class CompareError(Exception):
    """Input that cannot be compared; its message is the one sentence the user sees."""


def pooled_runs(paths: list[Path]) -> tuple[list[dict], dict]:
    runs: list[dict] = []
    seen: dict[tuple[str, int], Path] = {}
    reference: dict | None = None
    for path in paths:
        try:
            results = json.loads(path.read_text())
            protocol, part = results["protocol"], results["runs"]
        except (OSError, ValueError, KeyError, TypeError) as err:
            raise CompareError(f"{path} is not a bench results.json ({type(err).__name__}: {err})") from None
        shared = {key: protocol.get(key) for key in COMPARABLE}
        if reference is None:
            reference = shared
        elif shared != reference:
            differing = [k for k in COMPARABLE if shared[k] != reference[k]]
            raise CompareError(
                f"{path} was run differently from {paths[0]} ({', '.join(differing)}), so their runs cannot be pooled"
            )
        for run in part:
            key = (run["method"], run["seed"])
            if key in seen:
                raise CompareError(
                    f"{run['method']} seed {run['seed']} is in both {seen[key]} and {path}; a seed is counted once"
                )
            seen[key] = path
            runs.append(run)
    return runs, reference or {}


def compare(runs: list[dict], method: str, baseline: str, metrics: list[str]) -> list[dict]:
    methods = {r["method"] for r in runs}
    for name in (method, baseline):
        if name not in methods:
            raise CompareError(f"no run of the arm {name!r}; the results hold {', '.join(sorted(methods))}")
    arms = [r for r in runs if r["method"] in (method, baseline)]
    unknown = [m for m in metrics if any(not isinstance(r.get(m), (int, float)) for r in arms)]
    if not metrics or unknown:
        raise CompareError(
            f"no metric {', '.join(unknown) or '(none given)'} in these arms' runs; "
            "bench runs have train_success, held_out_success and auc"
        )
    summaries = [paired_summary(arms, method, baseline, metric) for metric in metrics]
    if not summaries[0]["seeds"]:
        raise CompareError(f"{method!r} and {baseline!r} share no seed, so they cannot be paired")
    return summaries


def _points(x: float | None) -> str:
    return "–" if x is None else f"{100 * x:+.1f}"


def report(summaries: list[dict]) -> str:
    first = summaries[0]
    lines = [f"{first['method']} − {first['baseline']}, paired on seeds {', '.join(map(str, first['seeds']))}"]
    for s in summaries:
        low, high = s["ci95"]
        ratio = "–" if s["ratio"] is None else f"{s['ratio']:.2f}"
        lines.append(
            f"  {s['metric']:<17} {100 * s['method_mean']:5.1f}% vs {100 * s['baseline_mean']:5.1f}%  "
            f"difference {_points(s['mean_difference'])} points [{_points(low)}, {_points(high)}]  "
            f"ratio {ratio}  per seed {', '.join(_points(d) for d in s['differences'])}"
        )
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results", nargs="+", type=Path, help="bench results.json files (pooled)")
    parser.add_argument("--method", required=True, help='the arm compared, e.g. "EMPO² (3 tips)"')
    parser.add_argument("--baseline", required=True, help="the arm it is compared with, e.g. GRPO")
    parser.add_argument(
        "--metrics",
        default="train_success,held_out_success,auc",
        help="comma-separated run metrics (default: %(default)s)",
    )
    parser.add_argument("--json", type=Path, default=None, help="also write the summaries here")
    args = parser.parse_args()
    try:
        runs, protocol = pooled_runs(args.results)
        metrics = [m.strip() for m in args.metrics.split(",") if m.strip()]
        summaries = compare(runs, args.method, args.baseline, metrics)
    except CompareError as err:
        print(f"compare_arms: {err}", file=sys.stderr)
        return 2
    print(
        f"preset {protocol.get('preset')} {' '.join(protocol.get('overrides') or [])}; "
        f"{len(args.results)} results file(s)"
    )
    print(report(summaries))
    if args.json:
        args.json.write_text(json.dumps({"protocol": protocol, "summaries": summaries}, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
