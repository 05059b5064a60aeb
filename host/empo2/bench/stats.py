"""The bench's statistics: learning-curve area, paired differences with a t-interval and two bootstrap CIs, ratio.

Pure functions of the per-run records that `empo2-host bench` writes (docs/bench/README.md
states the protocol), so the summary of any bench's results.json (docs/bench/b0/, b1/, ...) can
be recomputed from its own `runs`:

    summary = paired_summary(runs, "EMPO²", "GRPO", metric="train_success")
"""

from __future__ import annotations

import math
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


def bootstrap_ci(
    differences: list[float], level: float = 0.95, resamples: int = BOOTSTRAP_RESAMPLES, seed: int = BOOTSTRAP_SEED
) -> list[float]:
    """Percentile bootstrap CI of the mean, resampling seeds (pairs) with replacement."""
    if not differences:
        return [float("nan"), float("nan")]
    rng = random.Random(seed)
    n = len(differences)
    means = sorted(sum(rng.choice(differences) for _ in range(n)) / n for _ in range(resamples))
    low = means[int((1 - level) / 2 * resamples)]
    high = means[min(resamples - 1, int((1 + level) / 2 * resamples))]
    return [low, high]


def student_t_cdf(t: float, df: int) -> float:
    """P(T ≤ t) for Student's t with an integer df ≥ 1, from the closed-form series
    (Abramowitz & Stegun 26.7.3–4): exact up to float rounding, no numerical integration."""
    if df < 1:
        raise ValueError(f"degrees of freedom must be >= 1, got {df}")
    theta = math.atan2(t, math.sqrt(df))
    c2, s = math.cos(theta) ** 2, math.sin(theta)
    if df % 2:  # odd: 2θ/π + (2/π) sinθ cosθ (1 + 2/3 c² + … )
        term, total = 1.0, 1.0 if df > 1 else 0.0
        for k in range(1, (df - 1) // 2):
            term *= c2 * (2 * k) / (2 * k + 1)
            total += term
        a = (2 * theta + (2 * s * math.cos(theta) * total if df > 1 else 0.0)) / math.pi
    else:  # even: sinθ (1 + 1/2 c² + 1·3/(2·4) c⁴ + … )
        term, total = 1.0, 1.0
        for k in range(1, df // 2):
            term *= c2 * (2 * k - 1) / (2 * k)
            total += term
        a = s * total
    return 0.5 + a / 2  # a = P(|T| ≤ t) signed


def student_t_quantile(p: float, df: int) -> float:
    """The t with P(T ≤ t) = p (bisection on the exact CDF; 0 < p < 1)."""
    if not 0 < p < 1:
        raise ValueError(f"a quantile needs 0 < p < 1, got {p}")
    low, high = -1e3, 1e3
    for _ in range(200):
        mid = (low + high) / 2
        if student_t_cdf(mid, df) < p:
            low = mid
        else:
            high = mid
    return (low + high) / 2


def t_interval(differences: list[float], level: float = 0.95) -> list[float]:
    """Paired t-interval of the mean difference: mean ± t(1 − α/2, n − 1) · sd / √n.

    Wider than a percentile bootstrap at the bench's 5–10 seeds, which under-covers there (it
    treats the seeds' spread as known). nan with fewer than two differences."""
    n = len(differences)
    if n < 2:
        return [float("nan"), float("nan")]
    mean = statistics.fmean(differences)
    half = student_t_quantile((1 + level) / 2, n - 1) * statistics.stdev(differences) / math.sqrt(n)
    return [mean - half, mean + half]


def bca_ci(
    differences: list[float], level: float = 0.95, resamples: int = BOOTSTRAP_RESAMPLES, seed: int = BOOTSTRAP_SEED
) -> list[float]:
    """Bias-corrected and accelerated bootstrap CI of the mean (Efron 1987): the percentile
    interval's ends moved by the bootstrap's median bias (z0) and the jackknife's skew (a)."""
    n = len(differences)
    if n < 2:
        return [float("nan"), float("nan")]
    rng = random.Random(seed)
    mean = statistics.fmean(differences)
    means = sorted(sum(rng.choice(differences) for _ in range(n)) / n for _ in range(resamples))
    if means[0] == means[-1]:
        return [means[0], means[0]]
    normal = statistics.NormalDist()
    below = sum(m < mean for m in means) + 0.5 * sum(m == mean for m in means)
    z0 = normal.inv_cdf(min(max(below / resamples, 1 / resamples), 1 - 1 / resamples))
    jack = [(mean * n - d) / (n - 1) for d in differences]
    jack_mean = statistics.fmean(jack)
    num = sum((jack_mean - j) ** 3 for j in jack)
    den = 6 * sum((jack_mean - j) ** 2 for j in jack) ** 1.5
    accel = num / den if den else 0.0
    ends = []
    for alpha in ((1 - level) / 2, (1 + level) / 2):
        z = z0 + normal.inv_cdf(alpha)
        q = normal.cdf(z0 + z / (1 - accel * z))
        ends.append(means[min(resamples - 1, max(0, int(q * resamples)))])
    return ends


def paired_summary(runs: list[dict], method: str, baseline: str, metric: str) -> dict:
    """Paired comparison on the seeds both methods ran: the mean difference with three 95%
    intervals — `t95` (paired t, the one a claim rests on), `bca95` (BCa bootstrap) and `ci95`
    (percentile bootstrap, kept for the records that only have it) — whether a difference is
    claimed (`claimed`: the t-interval excludes zero, over at least MIN_CLAIM_SEEDS seeds), and
    the ratio of the means (None when the baseline's mean is 0)."""
    by_seed = {(r["method"], r["seed"]): r[metric] for r in runs}
    seeds = sorted(s for (m, s) in by_seed if m == method and (baseline, s) in by_seed)
    ours = [by_seed[(method, s)] for s in seeds]
    theirs = [by_seed[(baseline, s)] for s in seeds]
    differences = [a - b for a, b in zip(ours, theirs)]
    base_mean = statistics.fmean(theirs) if theirs else 0.0
    t95 = t_interval(differences)
    return {
        "method": method,
        "baseline": baseline,
        "metric": metric,
        "seeds": seeds,
        "method_mean": statistics.fmean(ours) if ours else None,
        "baseline_mean": base_mean if theirs else None,
        "differences": differences,
        "mean_difference": statistics.fmean(differences) if differences else None,
        "ci95": bootstrap_ci(differences),
        "t95": t95,
        "bca95": bca_ci(differences),
        "claimed": claimed(t95) and len(seeds) >= MIN_CLAIM_SEEDS,
        "ratio": (statistics.fmean(ours) / base_mean) if theirs and base_mean > 0 else None,
    }


# Fewer paired seeds make a t-interval that excludes zero too easy to meet by chance on a bench
# whose runs differ by tens of points from seed to seed: none is claimed on fewer.
MIN_CLAIM_SEEDS = 10


def claimed(interval: list[float]) -> bool:
    """A difference is claimed only when its paired t-interval excludes zero (nan: never)."""
    low, high = interval
    return bool(low > 0 or high < 0)
