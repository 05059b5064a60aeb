"""Tip reading at the end of each run of a bench: the per-run probes a protocol asks for, read
back from their text and summed up by arm, so a RESULTS.md table can be made again from the
files it cites.

    .venv/bin/python host/benchmarks/tip_reading.py RESULTS.json PROBES_FOLDER \\
        [--baseline EMPO²] [--task power-device] [--following-bar 75] [--invalid-bar 25] [--json OUT]

PROBES_FOLDER holds, per probed run, `<run name>.probe.txt` (probe_tips.py on the run's export:
gold-tip following is the "success tip" condition's success on `--task`) and
`<run name>.run_tips.txt` (run_tips.py on the run's folder: invalid actions by half of the run).
Prints one row per run of the results that has either file, then per arm the mean ± sd of
gold-tip following, the mean share of invalid actions in the second half's memory rollouts, and
whether both bars are met (following ≥ the first, invalid < the second); with `--baseline`, the
paired t-interval (`empo2.bench.stats`, the bench's own) of each arm's following minus the
baseline arm's, on the seeds both probed.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from empo2.bench.stats import t_interval  # noqa: E402

HALVES = ("first", "second")


class ProbeError(Exception):
    """Input that cannot be read; its message is the one sentence the user sees."""


def _share(text: str, pattern: str, path: Path) -> float:
    match = re.search(pattern, text, re.M)
    if not match:
        raise ProbeError(f"{path} has no line matching {pattern!r}; is it {path.suffixes[0][1:]} output?")
    return 100 * int(match[1]) / int(match[2])


def read_probe(path: Path, task: str) -> dict:
    """Gold-tip following and tip-free success on `task`, in percent, from probe_tips.py's text."""
    text = path.read_text()
    counts = rf"\{{[^}}]*'{re.escape(task)}': '[\d.]+% \((\d+)/(\d+)\)"
    return {
        "following": _share(text, rf"^success tip\s+success {counts}", path),
        "no_tip_success": _share(text, rf"^no memory\s+success {counts}", path),
    }


def read_run_tips(path: Path) -> dict:
    """Invalid actions by half of the run, in percent, from run_tips.py's text: memory rollouts
    (absent for an arm without them) and memory-free ones."""
    text = path.read_text()
    found: dict = {}
    for mode, key in (("memory", "invalid_memory"), ("memory-free", "invalid_memory_free")):
        halves = [
            re.search(rf"^invalid actions in {mode} rollouts, {half} half of the run: (\d+)/(\d+)", text, re.M)
            for half in HALVES
        ]
        # An arm without memory rollouts (GRPO) counts 0/0 in both halves: no share to give.
        if all(halves) and any(int(m[2]) for m in halves):
            found[key] = [100 * int(m[1]) / int(m[2]) if int(m[2]) else None for m in halves]
    if "invalid_memory_free" not in found:
        raise ProbeError(f"{path} has no invalid-action lines; is it run_tips.py output?")
    return found


def per_run(results: dict, probes: Path, task: str) -> list[dict]:
    rows = []
    for run in results["runs"]:
        probe, tips = probes / f"{run['name']}.probe.txt", probes / f"{run['name']}.run_tips.txt"
        if not (probe.exists() or tips.exists()):
            continue
        row = {"name": run["name"], "method": run["method"], "seed": run["seed"]}
        if probe.exists():
            row.update(read_probe(probe, task))
        if tips.exists():
            row.update(read_run_tips(tips))
        rows.append(row)
    return rows


def by_arm(rows: list[dict], following_bar: float, invalid_bar: float, baseline: str | None) -> list[dict]:
    arms = []
    for method in dict.fromkeys(r["method"] for r in rows):
        mine = [r for r in rows if r["method"] == method]
        following = [r["following"] for r in mine if "following" in r]
        invalid = [r["invalid_memory"][1] for r in mine if r.get("invalid_memory", [None, None])[1] is not None]
        arm = {
            "method": method,
            "runs": len(mine),
            "following_mean": statistics.fmean(following) if following else None,
            "following_sd": statistics.stdev(following) if len(following) > 1 else None,
            "invalid_memory_second_half_mean": statistics.fmean(invalid) if invalid else None,
        }
        arm["bars_met"] = (
            None
            if arm["following_mean"] is None or arm["invalid_memory_second_half_mean"] is None
            else arm["following_mean"] >= following_bar and arm["invalid_memory_second_half_mean"] < invalid_bar
        )
        if baseline and method != baseline:
            theirs = {r["seed"]: r["following"] for r in rows if r["method"] == baseline and "following" in r}
            pairs = [(r["following"], theirs[r["seed"]]) for r in mine if "following" in r and r["seed"] in theirs]
            differences = [a - b for a, b in pairs]
            arm["following_minus_baseline"] = {
                "baseline": baseline,
                "seeds": len(pairs),
                "mean": statistics.fmean(differences) if differences else None,
                "t95": t_interval(differences),
            }
        arms.append(arm)
    return arms


def _pct(x: float | None) -> str:
    return "–" if x is None else f"{x:.1f}%"


def report(rows: list[dict], arms: list[dict], following_bar: float, invalid_bar: float) -> str:
    lines = [
        "| run | gold-tip following | no-tip success | invalid in memory rollouts, 1st → 2nd half "
        "| invalid memory-free, 2nd half |",
        "|---|---|---|---|---|",
    ]
    for r in rows:
        memory = r.get("invalid_memory")
        memory_text = f"{_pct(memory[0])} → {_pct(memory[1])}" if memory else "(no memory rollouts)"
        free = r.get("invalid_memory_free", [None, None])[1]
        lines.append(
            f"| {r['method']}, seed {r['seed']} | {_pct(r.get('following'))} | "
            f"{_pct(r.get('no_tip_success'))} | {memory_text} | {_pct(free)} |"
        )
    lines.append("")
    for a in arms:
        sd = "" if a["following_sd"] is None else f" ± {a['following_sd']:.1f}"
        bars = {None: "", True: "; both bars met", False: "; bars not both met"}[a["bars_met"]]
        lines.append(
            f"{a['method']} ({a['runs']} runs): gold-tip following {_pct(a['following_mean'])}{sd}, "
            f"invalid in memory rollouts, 2nd half {_pct(a['invalid_memory_second_half_mean'])} "
            f"(bars: ≥ {following_bar:g}%, < {invalid_bar:g}%){bars}"
        )
        versus = a.get("following_minus_baseline")
        if versus and versus["seeds"]:
            low, high = versus["t95"]
            lines.append(
                f"  following − {versus['baseline']}: {versus['mean']:+.1f} points "
                f"[{low:+.1f}, {high:+.1f}] (paired t, {versus['seeds']} seeds)"
            )
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results", type=Path, help="the bench's results.json")
    parser.add_argument("probes", type=Path, help="the folder of <run>.probe.txt and <run>.run_tips.txt")
    parser.add_argument("--task", default="power-device", help="the probe's task (default: %(default)s)")
    parser.add_argument("--baseline", default=None, help="the arm every other arm's following is paired with")
    parser.add_argument("--following-bar", type=float, default=75.0, help="percent (default: %(default)s)")
    parser.add_argument("--invalid-bar", type=float, default=25.0, help="percent (default: %(default)s)")
    parser.add_argument("--json", type=Path, default=None, help="also write the rows and arms here")
    args = parser.parse_args()
    try:
        try:
            results = json.loads(args.results.read_text())
            results["runs"][0]["name"]
        except (OSError, ValueError, KeyError, IndexError, TypeError) as err:
            raise ProbeError(
                f"{args.results} is not a bench results.json with runs ({type(err).__name__}: {err})"
            ) from None
        if not args.probes.is_dir():
            raise ProbeError(f"{args.probes} is not a folder of probes")
        rows = per_run(results, args.probes, args.task)
        if not rows:
            raise ProbeError(f"{args.probes} holds no probe of any run in {args.results}")
        if args.baseline and args.baseline not in {r["method"] for r in rows}:
            raise ProbeError(f"no probed run of the arm {args.baseline!r}")
    except (ProbeError, OSError) as err:
        print(f"tip_reading: {err}", file=sys.stderr)
        return 2
    arms = by_arm(rows, args.following_bar, args.invalid_bar, args.baseline)
    print(report(rows, arms, args.following_bar, args.invalid_bar))
    if args.json:
        args.json.write_text(json.dumps({"rows": rows, "arms": arms}, indent=2, ensure_ascii=False) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
