"""`empo2-host bench`: the paper's headline at small scale, EMPO² against GRPO.

For every seed, EMPO² and GRPO (the same code with p = 0) train the built-in policy on the
built-in exploration tasks with the same environment-step budget. Then, for each trained policy
and for the warm-start policy:

- memory-free success on the held-out variations of the trained tasks (the paper's evaluation);
- out-of-distribution transfer: the held-out task kind, memory on, no weight updates, 10 trials
  (tips written after each trial feed the next), reported as trial-1 and trial-10 success.

Results go to OUT/results.json and OUT/results.md, as measured. Two training processes run at
once with one thread each: on two cores that is faster than one process with two threads, since
the built-in model's matrices are too small to keep two threads busy.
"""

from __future__ import annotations

import json
import os
import statistics
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from . import metric_keys as metric
from .arms import ABLATIONS, ARMS
from .config import load_config
from .envs.builtin.tasks import out_of_distribution_tasks

OOD_TRIALS = 10


def _train_and_evaluate(job: dict) -> dict:
    """One training run and its evaluation, in a worker process with one thread."""
    import torch

    torch.set_num_threads(1)
    from .evaluation import memory_trials
    from .memory.embedding import SentenceEmbedder
    from .rollout import RolloutSettings
    from .runs.folder import RunFolder
    from .trainer import Trainer

    started = time.time()
    config = load_config("builtin-bench", job["overrides"] + [f"seed={job['seed']}"])
    config.root, config.name = job["root"], job["name"]
    embedder = SentenceEmbedder()
    if job["train"]:
        folder = RunFolder.create(Path(config.root), config.name, config.to_dict())
        trainer = Trainer(config, folder, embedder=embedder)
        trainer.run()
        model, tokenizer, iterations = trainer.model, trainer.tokenizer, trainer.iteration
        env_steps = sum(m[metric.ROLLOUT_STEPS] for m in folder.metrics())
    else:
        from .policy.model import load_policy
        from .trainer import resolve_model

        model, tokenizer = load_policy(resolve_model(config.policy.model), device="cpu")
        iterations, env_steps = 0, 0
    model.eval()
    p = config.policy
    from .envs.registry import make_env

    env = make_env(config.env)
    settings = RolloutSettings.from_config(config, env, train=False)
    held_out = [(t, v) for t in config.env.tasks
                for v in env.variations(t, "test")[:config.eval.max_variations]]
    in_dist = memory_trials(model, tokenizer, config.env, held_out, 1, settings, p.max_tip_tokens,
                            embedder, seed=10_000 + job["seed"],
                            episodes_per_pair=config.eval.episodes_per_variation)
    ood_pairs = [(t, v) for t in out_of_distribution_tasks() for v in env.variations(t, "test")[:10]]
    ood = memory_trials(model, tokenizer, config.env, ood_pairs, OOD_TRIALS, settings,
                        p.max_tip_tokens, embedder, seed=20_000 + job["seed"])
    return {
        "method": job["method"], "seed": job["seed"], "iterations": iterations,
        "env_steps": env_steps, "held_out_success": in_dist.success[0],
        "held_out_score": in_dist.score[0], "ood_success_by_trial": ood.success,
        "ood_score_by_trial": ood.score, "seconds": round(time.time() - started, 1),
    }


def run_bench(seeds: list[int], iterations: int | None, out: Path, root: Path | None,
              ablations: bool, bar_factory) -> dict:
    root = root or Path(".empo2") / "bench" / time.strftime("%Y%m%d-%H%M%S")
    methods = dict(ARMS, **(ABLATIONS if ablations else {}))
    # --iterations replaces the env-step budget: every run then trains that many iterations.
    extra = [f"iterations={iterations}", "max_env_steps=0"] if iterations else []
    jobs = [{"method": "warm start (no RL)", "seed": 0, "overrides": [], "train": False,
             "root": str(root), "name": "warm-start"}]
    for seed in seeds:
        for method, overrides in methods.items():
            slug = method.lower().replace("²", "2").replace(" ", "-").replace("(", "").replace(")", "").replace("=", "")
            jobs.append({"method": method, "seed": seed, "overrides": overrides + extra,
                         "train": True, "root": str(root), "name": f"{slug}-seed{seed}"})
    # Build the shared policy once, before workers race to build it.
    from .trainer import resolve_model

    resolve_model(load_config("builtin-bench").policy.model)
    bar = bar_factory("bench", total=len(jobs), unit="run")
    results = []
    started = time.time()
    with ProcessPoolExecutor(max_workers=min(2, os.cpu_count() or 1)) as pool:
        for result in pool.map(_train_and_evaluate, jobs):
            results.append(result)
            bar.update(1)
    bar.close()
    report = {"seeds": seeds, "root": str(root), "seconds": round(time.time() - started, 1),
              "runs": results, "table": _table(results)}
    out.mkdir(parents=True, exist_ok=True)
    (out / "results.json").write_text(json.dumps(report, indent=2) + "\n")
    (out / "results.md").write_text(_markdown(report) + "\n")
    print(_markdown(report))
    return report


def _mean_std(values: list[float]) -> tuple[float, float]:
    return statistics.fmean(values), (statistics.stdev(values) if len(values) > 1 else 0.0)


def _table(results: list[dict]) -> list[dict]:
    rows = []
    for method in dict.fromkeys(r["method"] for r in results):
        mine = [r for r in results if r["method"] == method]
        held, held_sd = _mean_std([r["held_out_success"] for r in mine])
        first, _ = _mean_std([r["ood_success_by_trial"][0] for r in mine])
        last, _ = _mean_std([r["ood_success_by_trial"][-1] for r in mine])
        rows.append({"method": method, "seeds": len(mine), "held_out_success": held,
                     "held_out_success_std": held_sd, "ood_trial1": first, "ood_trial10": last,
                     "env_steps": statistics.fmean(r["env_steps"] for r in mine)})
    return rows


def _markdown(report: dict) -> str:
    lines = [
        f"Seeds {report['seeds']}; {report['seconds'] / 60:.1f} min on this machine.",
        "",
        "| method | seeds | env steps | held-out success, memory-free | OOD trial 1 | OOD trial 10 |",
        "|---|---|---|---|---|---|",
    ]
    for row in report["table"]:
        lines.append(
            f"| {row['method']} | {row['seeds']} | {row['env_steps']:.0f} | "
            f"{100 * row['held_out_success']:.1f}% ± {100 * row['held_out_success_std']:.1f} | "
            f"{100 * row['ood_trial1']:.1f}% | {100 * row['ood_trial10']:.1f}% |"
        )
    return "\n".join(lines)
