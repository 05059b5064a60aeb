"""The bench's statistics: learning-curve area, paired differences with a bootstrap CI, ratio.

Pure functions of the per-run records that `empo2-host bench` writes (docs/bench/README.md
states the protocol), so the summary of any bench's results.json (docs/bench/b0/, b1/, ...) can
be recomputed from its own `runs`:

    summary = paired_summary(runs, "EMPO²", "GRPO", metric="train_success")
"""

from __future__ import annotations

import random
import statistics

BOOTSTRAP_RESAMPLES = 10_000
BOOTSTRAP_SEED = 0


def curve_auc(curve: list[list[float]], budget: float) -> float:
    """Mean success over [0, budget] env steps: the trapezoid area under the (env_steps,
    success) points, held flat before the first and after the last point, divided by budget.
    0.0 for an empty curve."""
    if not curve or budget <= 0:
        return 0.0
    points = sorted((float(x), float(y)) for x, y in curve)
    xs = [0.0] + [min(x, budget) for x, _ in points] + [budget]
    ys = [points[0][1]] + [y for _, y in points] + [points[-1][1]]
    area = sum((xs[i + 1] - xs[i]) * (ys[i] + ys[i + 1]) / 2 for i in range(len(xs) - 1))
    return area / budget


def bootstrap_ci(differences: list[float], level: float = 0.95,
                 resamples: int = BOOTSTRAP_RESAMPLES, seed: int = BOOTSTRAP_SEED) -> list[float]:
    """Percentile bootstrap CI of the mean, resampling seeds (pairs) with replacement."""
    if not differences:
        return [float("nan"), float("nan")]
    rng = random.Random(seed)
    n = len(differences)
    means = sorted(sum(rng.choice(differences) for _ in range(n)) / n for _ in range(resamples))
    low = means[int((1 - level) / 2 * resamples)]
    high = means[min(resamples - 1, int((1 + level) / 2 * resamples))]
    return [low, high]


def paired_summary(runs: list[dict], method: str, baseline: str, metric: str) -> dict:
    """Paired comparison on the seeds both methods ran: the mean difference, its 95% bootstrap
    CI, and the ratio of the means (None when the baseline's mean is 0)."""
    by_seed = {(r["method"], r["seed"]): r[metric] for r in runs}
    seeds = sorted(s for (m, s) in by_seed if m == method and (baseline, s) in by_seed)
    ours = [by_seed[(method, s)] for s in seeds]
    theirs = [by_seed[(baseline, s)] for s in seeds]
    differences = [a - b for a, b in zip(ours, theirs)]
    base_mean = statistics.fmean(theirs) if theirs else 0.0
    return {
        "method": method, "baseline": baseline, "metric": metric, "seeds": seeds,
        "method_mean": statistics.fmean(ours) if ours else None,
        "baseline_mean": base_mean if theirs else None,
        "differences": differences,
        "mean_difference": statistics.fmean(differences) if differences else None,
        "ci95": bootstrap_ci(differences),
        "ratio": (statistics.fmean(ours) / base_mean) if theirs and base_mean > 0 else None,
    }
