"""`empo2-host bench`: EMPO² against the paper's GRPO on the built-in worlds, as declared in
docs/bench/README.md (the protocol is fixed there before any numbers).

For every seed, each arm (bench/arms.py) trains the built-in policy from the same warm start
with the same environment-step budget and the same task sequence (the trainer draws tasks and
modes from one generator seeded by the run's seed, with the same number of draws per iteration
for every arm, so seed s gives every arm the same tasks in the same order). Then, per trained
policy and for the warm start:

- primary (`primary_metric`, default as the paper reports): memory-free success on held-out
  variations of the same kind (`held_out_success`), at least `eval_episodes` episodes at the
  evaluation temperature (0.4);
- secondary: memory-free success on the training variations (`train_success`);
- the learning curve: memory-free rollout success of the training iterations against env
  steps (temperature 1.0), and its area (`auc`, the mean success over the budget);
- out-of-distribution: the held-out kind, memory on, no weight updates, `ood_trials` trials
  (tips written after each trial feed the next), success by trial.

Evaluation episodes use seeds that depend on the run's seed only, so the arms of one seed are
also evaluated on the same episodes. OUT/results.json holds one record per run and a `summary`
(paired mean difference with its 95% paired t-interval — a difference is claimed only when it
excludes zero — the BCa and percentile bootstrap CIs, and the ratio); OUT/results.md the
tables, OUT/learning-curves.svg the curves. Runs go to `workers` processes of one thread each:
the built-in model's matrices are too small to keep two threads busy.

With `resume`, the runs an earlier bench already wrote to OUT/results.json under the same
protocol (everything but its seeds and arms) are kept rather than trained again: a bench cut
short goes on where it stopped, and arms or seeds can be added to a bench of record; a run the
earlier bench left half trained under the same root resumes from its last checkpoint.
"""

from __future__ import annotations

import json
import math
import os
import statistics
import sys
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path

from .. import metric_keys as metric
from ..atomic import atomic_write_text
from ..config import load_config
from ..envs.builtin.tasks import out_of_distribution_tasks
from .arms import ABLATIONS, ARMS, DEFAULT_ARMS
from .provenance import cpu_model, weights_sha256
from .stats import curve_auc, paired_summary
from .svg import learning_curves_svg, mean_curve

PRESET = "builtin-bench"
WARM_START = "warm start (no RL)"
PRIMARY, BASELINE = "EMPO²", "GRPO"
PRIMARY_METRICS = ("held_out_success", "train_success")
# What a resumed bench must share with the report it extends; seeds and arms may grow.
SAME_PROTOCOL = (
    "preset",
    "overrides",
    "policy",
    "env_step_budget",
    "eval_episodes",
    "eval_temperature",
    "ood_trials",
    "primary_metric",
    "tasks",
)


class ResumeError(ValueError):
    """The earlier report cannot be extended (unreadable, or under another protocol)."""


def _slug(method: str) -> str:
    keep = method.lower().replace("²", "2").replace("+", "plus")
    return "".join(c if c.isalnum() else "-" for c in keep).strip("-").replace("--", "-")


def _run_folder(path: Path, config: dict):
    """The run folder of a bench job and whether its training resumes: a bench stopped while this
    run trained (or evaluated) left its folder under the root, and `--resume` continues that run
    from its last checkpoint, which reproduces the uninterrupted run. A folder made under another
    config is refused rather than mixed in."""
    from ..run_folder.folder import RunFolder

    if not (path / "config.json").exists():
        return RunFolder.create(path.parent, path.name, config), False
    folder = RunFolder.open(path)
    if folder.config() != json.loads(json.dumps(config)):  # as config.json holds it
        raise ResumeError(f"{path} holds a run with another config; move it away or bench into another --root")
    return folder, True


def _train_and_evaluate(job: dict) -> dict:
    """One training run and its evaluation, in a worker process with one thread."""
    import torch

    torch.set_num_threads(1)
    from ..envs.registry import make_env
    from ..memory.embedding import SentenceEmbedder
    from ..training.evaluation import memory_free_success, memory_trials
    from ..training.rollout import MEMORY_FREE, RolloutSettings
    from ..training.trainer import Trainer, initial_tip_writer, resolve_device, resolve_model

    started = time.time()
    config = load_config(job["preset"], job["overrides"] + [f"seed={job['seed']}"])
    config.root, config.name = job["root"], job["name"]
    embedder = SentenceEmbedder()
    curve: list[list[float]] = []
    if job["train"]:
        folder, resume = _run_folder(Path(config.root) / config.name, config.to_dict())
        trainer = Trainer(config, folder, embedder=embedder)
        trainer.run(resume=resume)
        model, tokenizer, iterations = trainer.model, trainer.tokenizer, trainer.iteration
        metrics = folder.metrics()
        env_steps = metrics[-1][metric.ENV_STEPS] if metrics else 0
        free = metric.rollout_success(metric.mode_segment(MEMORY_FREE))
        curve = [[m[metric.ENV_STEPS], m[free]] for m in metrics if free in m]
        # The run's own training time over every invocation that trained it (a resumed run's
        # wall clock below counts only the last one).
        train_seconds = sum(m.get(metric.TIME_TOTAL, 0.0) for m in metrics)
        # Gradient steps of the run, and those of its off-policy iterations (the distillation).
        steps = metric.UPDATE_PREFIX + "optimizer_steps"
        optimizer_steps = [
            int(sum(m.get(key, 0) for m in metrics)) for key in (steps, metric.OFF_POLICY_PREFIX + "optimizer_steps")
        ]
        trainer.close()
    else:
        from ..policy.model import load_policy

        model, tokenizer = load_policy(
            resolve_model(config.policy.model), device=str(resolve_device(config.policy.device))
        )
        iterations, env_steps, train_seconds, optimizer_steps = 0, 0, 0.0, [0, 0]
    model.eval()
    env = make_env(config.env)
    settings = RolloutSettings.from_config(config, env, train=False)
    seed = 10_000 + job["seed"]  # the same evaluation episodes for every arm of a seed

    def split(name: str) -> list[tuple[str, int]]:
        chosen = config.env.train_variations if name == "train" else config.env.test_variations
        return [(t, v) for t in config.env.tasks for v in (chosen or env.variations(t, name))]

    def per_pair(pairs) -> int:
        return max(1, math.ceil(job["eval_episodes"] / len(pairs)))

    train_pairs, test_pairs = split("train"), split("test")
    train_success = memory_free_success(
        model, tokenizer, config.env, train_pairs, settings, seed, per_pair(train_pairs)
    )
    held_out = memory_free_success(model, tokenizer, config.env, test_pairs, settings, seed + 1, per_pair(test_pairs))
    ood = {"success": [], "score": []}
    if job["ood_trials"]:
        ood_pairs = [(t, v) for t in out_of_distribution_tasks() for v in env.variations(t, "test")[:10]]
        trials = memory_trials(
            model,
            tokenizer,
            config.env,
            ood_pairs,
            job["ood_trials"],
            settings,
            config.policy.max_tip_tokens,
            embedder,
            seed=20_000 + job["seed"],
            writer=initial_tip_writer(config),
        )
        ood = {"success": trials.success, "score": trials.score}
    return {
        "method": job["method"],
        "seed": job["seed"],
        "overrides": job["overrides"],
        "iterations": iterations,
        "env_steps": env_steps,
        "optimizer_steps": optimizer_steps[0],
        "off_policy_optimizer_steps": optimizer_steps[1],
        "train_success": train_success.success,
        "train_episodes": train_success.episodes,
        "held_out_success": held_out.success,
        "held_out_episodes": held_out.episodes,
        # Over the declared budget; with --iterations (no budget) over the run's own steps.
        "auc": curve_auc(curve, job["budget"] or env_steps) if curve else None,
        "curve": curve,
        "ood_success_by_trial": ood["success"],
        "ood_score_by_trial": ood["score"],
        "seconds": round(time.time() - started, 1),
        "train_seconds": round(train_seconds, 1),
    }


def chosen_arms(names: list[str] | None) -> dict[str, list[str]]:
    """The main arms to run: DEFAULT_ARMS, or the named ones of ARMS (EMPO² and GRPO always
    among them, since the summary compares them)."""
    if not names:
        return {m: ARMS[m] for m in DEFAULT_ARMS}
    unknown = [n for n in names if n not in ARMS]
    if unknown:
        raise ValueError(f"unknown arm {unknown[0]!r}; the arms are: {', '.join(ARMS)}")
    missing = [m for m in (PRIMARY, BASELINE) if m not in names]
    if missing:
        raise ValueError(f"--arms must include {PRIMARY} and {BASELINE} (the primary comparison)")
    return {m: o for m, o in ARMS.items() if m in names}


def bench_jobs(
    seeds: list[int],
    ablation_seeds: list[int],
    preset: str,
    overrides: list[str],
    root: Path,
    eval_episodes: int,
    ood_trials: int,
    arms: dict[str, list[str]] | None = None,
) -> list[dict]:
    """Every run of the bench: the warm start once, each arm on every seed, each ablation on
    `ablation_seeds`. Seed by seed, so a bench cut short has whole pairs."""
    budget = load_config(preset, overrides).max_env_steps
    common = {
        "preset": preset,
        "root": str(root),
        "eval_episodes": eval_episodes,
        "ood_trials": ood_trials,
        "budget": budget,
    }
    jobs = [dict(common, method=WARM_START, seed=seeds[0], overrides=list(overrides), train=False, name="warm-start")]
    arms = chosen_arms(None) if arms is None else arms
    plan = [(m, o, seeds) for m, o in arms.items()] + [(m, o, ablation_seeds) for m, o in ABLATIONS.items()]
    for seed in seeds + [s for s in ablation_seeds if s not in seeds]:
        for method, arm, on in plan:
            if seed in on:
                jobs.append(
                    dict(
                        common,
                        method=method,
                        seed=seed,
                        overrides=list(overrides) + arm,
                        train=True,
                        name=f"{_slug(method)}-seed{seed}",
                    )
                )
    return jobs


def reusable_runs(report_path: Path, protocol: dict, jobs: list[dict]) -> tuple[list[dict], list[dict]]:
    """The runs of the earlier report at `report_path` that this bench plans again (same name
    and overrides), and that report's record of earlier invocations with itself appended.
    Raises ResumeError when the report cannot be read or was made under another protocol."""
    if not report_path.exists():
        return [], []
    try:
        earlier = json.loads(report_path.read_text())
        old, old_runs = earlier["protocol"], earlier["runs"]
    except (OSError, ValueError, KeyError, TypeError):
        raise ResumeError(f"{report_path} is not a bench report that can be resumed") from None
    for key in SAME_PROTOCOL:
        if old.get(key) != protocol[key]:
            raise ResumeError(
                f"{report_path} was made with {key} = {old.get(key)!r}, this bench "
                f"has {protocol[key]!r}; resume only under the same protocol"
            )
    planned = {job["name"]: job["overrides"] for job in jobs}
    kept = [r for r in old_runs if planned.get(r.get("name")) == r.get("overrides")]
    history = list(earlier.get("earlier", [])) + [
        {"root": earlier.get("root"), "seconds": earlier.get("seconds"), "runs": len(old_runs)}
    ]
    return kept, history


def run_bench(
    seeds: list[int],
    out: Path,
    root: Path | None = None,
    ablation_seeds: list[int] = (),
    preset: str = PRESET,
    overrides: list[str] = (),
    eval_episodes: int = 240,
    ood_trials: int = 10,
    workers: int | None = None,
    bar_factory=None,
    arms: list[str] | None = None,
    resume: bool = False,
    primary_metric: str = "held_out_success",
) -> dict:
    """Runs the bench and writes its report. The report is rewritten after every finished run
    (`finished_runs` of `planned_runs`, `complete` false until the last), so a bench stopped
    early keeps the runs it finished, and their paired summary, on disk; with `resume` those
    runs are kept and only the others are trained."""
    root = root or Path(".empo2") / "bench" / time.strftime("%Y%m%d-%H%M%S")
    if primary_metric not in PRIMARY_METRICS:
        raise ValueError(f"the primary metric is one of {', '.join(PRIMARY_METRICS)}, not {primary_metric!r}")
    overrides = list(overrides)
    config = load_config(preset, overrides)  # a bad preset or override fails here, before any run
    main_arms = chosen_arms(arms)
    jobs = bench_jobs(list(seeds), list(ablation_seeds), preset, overrides, root, eval_episodes, ood_trials, main_arms)
    from ..training.trainer import resolve_model

    # Build the shared policy once, before workers race; its folder names the recipe it came from.
    resolved = resolve_model(config.policy.model)
    policy = Path(resolved).name
    # The weights, not only the recipe's name: a build on another CPU rounds differently.
    provenance = {"policy_sha256": weights_sha256(resolved), "cpu": cpu_model()}
    protocol = {
        "preset": preset,
        "overrides": overrides,
        "policy": policy,
        "seeds": list(seeds),
        "arms": list(main_arms),
        "ablation_seeds": list(ablation_seeds),
        "env_step_budget": config.max_env_steps,
        "eval_episodes": eval_episodes,
        "eval_temperature": config.policy.eval_temperature,
        "ood_trials": ood_trials,
        "primary_metric": primary_metric,
        "tasks": config.env.tasks,
    }
    runs, earlier = reusable_runs(out / "results.json", protocol, jobs) if resume else ([], [])
    kept = {r["name"] for r in runs}
    todo = [job for job in jobs if job["name"] not in kept]
    foreign = sorted({r["seed"] for r in runs if r.get("policy_sha256") not in (None, provenance["policy_sha256"])})
    if todo and foreign:
        print(
            f"empo2: the runs kept for seeds {', '.join(map(str, foreign))} started from other weights "
            f"than this machine's {policy} (a build on another CPU rounds differently); each run "
            f"records its own (policy_sha256)",
            file=sys.stderr,
        )
    bar = bar_factory("bench", total=len(todo), unit="run") if bar_factory else None
    started = time.time()

    def report_now() -> dict:
        order = {job["name"]: k for k, job in enumerate(jobs)}
        done = sorted(runs, key=lambda r: order[r["name"]])
        report = {
            "protocol": protocol,
            "root": str(root),
            "seconds": round(time.time() - started, 1),
            "planned_runs": len(jobs),
            "finished_runs": len(done),
            "complete": len(done) == len(jobs),
            "runs": done,
            "table": summary_table(done),
            "summary": summarise(done, primary_metric),
        }
        if earlier:  # the invocations whose runs this report kept (root, time, runs)
            report["earlier"] = earlier
        return report

    if not todo:  # everything planned is in results.json already: rewrite it, start no worker
        write_report(report_now(), out)
        return report_now()
    with ProcessPoolExecutor(max_workers=workers or min(2, os.cpu_count() or 1)) as pool:
        pending = {pool.submit(_train_and_evaluate, job): job for job in todo}
        for future in as_completed(pending):
            runs.append(dict(future.result(), name=pending[future]["name"], **provenance))
            if bar:
                bar.update(1)
            write_report(report_now(), out, quiet=len(runs) < len(jobs))
    if bar:
        bar.close()
    return report_now()


def summarise(runs: list[dict], primary_metric: str = "train_success") -> dict:
    """The paired comparisons: EMPO² against GRPO on the primary metric, on each success metric
    (`train`, `held_out`) and the curve's area; every other arm against GRPO and EMPO² against
    each ablation, on the primary metric. The default is the metric of the benches recorded
    before held-out success became the primary one (their results.json say which)."""
    trained = [r for r in runs if r["method"] != WARM_START]
    methods = list(dict.fromkeys(r["method"] for r in trained))
    summary = {
        "primary": paired_summary(trained, PRIMARY, BASELINE, primary_metric),
        "train": paired_summary(trained, PRIMARY, BASELINE, "train_success"),
        "held_out": paired_summary(trained, PRIMARY, BASELINE, "held_out_success"),
        "auc": paired_summary([r for r in trained if r["auc"] is not None], PRIMARY, BASELINE, "auc"),
        "arms_vs_grpo": [
            paired_summary(trained, m, BASELINE, primary_metric)
            for m in methods
            if m in ARMS and m not in (PRIMARY, BASELINE)
        ],
        "empo2_vs_ablations": [paired_summary(trained, PRIMARY, m, primary_metric) for m in methods if m in ABLATIONS],
    }
    summary["ratio"] = summary["primary"]["ratio"]
    summary["ci95"] = summary["primary"]["ci95"]
    summary["t95"] = summary["primary"]["t95"]
    summary["claimed"] = summary["primary"]["claimed"]
    return summary


def _mean_sd(values: list[float]) -> tuple[float, float]:
    return statistics.fmean(values), (statistics.stdev(values) if len(values) > 1 else 0.0)


def summary_table(runs: list[dict]) -> list[dict]:
    rows = []
    for method in dict.fromkeys(r["method"] for r in runs):
        mine = [r for r in runs if r["method"] == method]
        train, train_sd = _mean_sd([r["train_success"] for r in mine])
        held, held_sd = _mean_sd([r["held_out_success"] for r in mine])
        aucs = [r["auc"] for r in mine if r["auc"] is not None]
        ood = [r["ood_success_by_trial"] for r in mine if r["ood_success_by_trial"]]
        rows.append(
            {
                "method": method,
                "seeds": len(mine),
                "env_steps": statistics.fmean(r["env_steps"] for r in mine),
                "train_success": train,
                "train_success_sd": train_sd,
                "held_out_success": held,
                "held_out_success_sd": held_sd,
                "auc": statistics.fmean(aucs) if aucs else None,
                "ood_first": statistics.fmean(o[0] for o in ood) if ood else None,
                "ood_last": statistics.fmean(o[-1] for o in ood) if ood else None,
            }
        )
    return rows


def _pct(value) -> str:
    return "–" if value is None else f"{100 * value:.1f}%"


def _points(value) -> str:
    return "–" if value is None else f"{100 * value:+.1f}"


def _minutes(report: dict) -> str:
    """The bench's time, with the invocations a resumed report kept runs of."""
    earlier = [e.get("seconds") or 0 for e in report.get("earlier", [])]
    text = f"{(report['seconds'] + sum(earlier)) / 60:.1f} min"
    if earlier:
        text += (
            f" (in {len(earlier) + 1} invocations: "
            + ", ".join(f"{s / 60:.1f}" for s in earlier + [report["seconds"]])
            + " min)"
        )
    return text


def markdown(report: dict) -> str:
    p = report["protocol"]
    # Benches recorded before the protocol named its primary metric used training success.
    primary = p.get("primary_metric", "train_success")
    mark = {m: " (primary)" if m == primary else "" for m in PRIMARY_METRICS}
    lines = [
        f"Preset `{p['preset']}` {' '.join(p['overrides'])}; seeds {p['seeds']} "
        f"(ablations: {p['ablation_seeds'] or 'none'}); budget {p['env_step_budget']:,} env steps; "
        f"{p['eval_episodes']} evaluation episodes per split at temperature {p['eval_temperature']}; "
        f"{_minutes(report)} on this machine.",
        *_warm_starts(report.get("runs", [])),
        "",
        f"| method | seeds | env steps | train success{mark['train_success']} | held-out "
        f"success{mark['held_out_success']} | AUC | OOD trial 1 | OOD last trial |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for row in report["table"]:
        lines.append(
            f"| {row['method']} | {row['seeds']} | {row['env_steps']:.0f} | "
            f"{_pct(row['train_success'])} ± {100 * row['train_success_sd']:.1f} | "
            f"{_pct(row['held_out_success'])} ± {100 * row['held_out_success_sd']:.1f} | "
            f"{_pct(row['auc'])} | {_pct(row['ood_first'])} | {_pct(row['ood_last'])} |"
        )
    lines += [
        "",
        "| comparison (paired by seed) | metric | mean difference, points | 95% paired t-interval | "
        "claimed | 95% BCa bootstrap | 95% percentile bootstrap | ratio |",
        "|---|---|---|---|---|---|---|---|",
    ]
    s = report["summary"]
    secondary = [s[k] for k in ("train", "held_out") if k in s and s[k]["metric"] != s["primary"]["metric"]]
    for c in [s["primary"], *secondary, s["auc"], *s["arms_vs_grpo"], *s["empo2_vs_ablations"]]:
        ratio = "–" if c["ratio"] is None else f"{c['ratio']:.2f}"
        lines.append(
            f"| {c['method']} − {c['baseline']} ({len(c['seeds'])} seeds) | {c['metric']} | "
            f"{_points(c['mean_difference'])} | {_interval(c.get('t95'))} | "
            f"{'yes' if c.get('claimed') else 'no'} | {_interval(c.get('bca95'))} | "
            f"{_interval(c['ci95'])} | {ratio} |"
        )
    return "\n".join(lines)


def _warm_starts(runs: list[dict]) -> list[str]:
    """The line naming the weights the runs started from, with the CPU and seeds of each (runs
    recorded before runs kept their weights' hash have none)."""
    builds: dict[tuple[str, str], set[int]] = {}
    for run in runs:
        if run.get("policy_sha256"):
            builds.setdefault((run["policy_sha256"], run.get("cpu", "unknown CPU")), set()).add(run["seed"])
    if not builds:
        return []
    return [
        "",
        "Warm start's weights (sha256): "
        + "; ".join(
            f"`{sha[:12]}` on {cpu} (seeds {', '.join(map(str, sorted(seeds)))})"
            for (sha, cpu), seeds in builds.items()
        )
        + ".",
    ]


def _interval(interval: list[float] | None) -> str:
    if not interval or any(math.isnan(x) for x in interval):
        return "–"
    return f"[{_points(interval[0])}, {_points(interval[1])}]"


def write_report(report: dict, out: Path, quiet: bool = False) -> None:
    out.mkdir(parents=True, exist_ok=True)
    atomic_write_text(out / "results.json", json.dumps(report, indent=2) + "\n")
    atomic_write_text(out / "results.md", markdown(report) + "\n")
    budget = report["protocol"]["env_step_budget"] or max((r["env_steps"] for r in report["runs"]), default=1)
    series = {}
    for method in dict.fromkeys(r["method"] for r in report["runs"] if r["curve"]):
        series[method] = mean_curve(
            [r["curve"] for r in report["runs"] if r["method"] == method and r["curve"]], budget
        )
    atomic_write_text(
        out / "learning-curves.svg",
        learning_curves_svg(series, budget, "memory-free rollout success during training (mean over seeds)"),
    )
    if not quiet:
        print(markdown(report))
