"""What a built-in policy's build costs on this machine, before committing hours to one: seconds
per imitation step for each model size on the same batches, and the whole build projected.

    .venv/bin/python host/benchmarks/build_speed.py                    # default against large
    .venv/bin/python host/benchmarks/build_speed.py --sizes tiny,default --steps 10

Each size runs the real build of the recipe `build-policy --size` builds (`build_builtin_policy`:
its demonstrations, vocabulary and imitation) with the same seed, so every size takes the same
batches in the same order (a size's own learning rate changes no step's cost), and
stops it after `--steps` optimizer steps (nothing reaches the cache). The first steps are left
out of the timing (allocator and thread-pool warm-up). The baseline is the first size, measured
in the same run: the ratio says how much longer a step of each other size takes on the same
machine under the same load, which the absolute seconds do not (a busy machine slows both).
Prints one line per size and the ratios; the last line is the JSON report.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from empo2.policy.builtin import BuildCancelled, BuiltinRecipe, build_builtin_policy, recipe_for  # noqa: E402
from empo2.policy.model import TINY_SIZES  # noqa: E402

WARMUP_STEPS = 3  # left out of the per-step timing


def time_steps(recipe: BuiltinRecipe, steps: int) -> dict:
    """Seconds to the first step (demonstrations, vocabulary, model) and per step after the
    warm-up, from a build of `recipe` stopped after `steps` steps."""
    marks: list[float] = []
    total_steps = 0

    def tick(done: int, total: int, _epoch: int, _loss: float) -> None:
        nonlocal total_steps
        marks.append(time.perf_counter())
        total_steps = total
        if done >= steps:
            raise BuildCancelled

    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="empo2-build-speed-") as scratch:
        try:
            build_builtin_policy(recipe, Path(scratch) / "policy", progress=tick)
        except BuildCancelled:
            pass
    gaps = [b - a for a, b in zip(marks[WARMUP_STEPS:], marks[WARMUP_STEPS + 1 :])]
    per_step = statistics.median(gaps)
    setup = marks[0] - started - per_step  # the first mark follows one step
    return {
        "size": recipe.size,
        "setup_s": round(setup, 2),
        "step_s": round(per_step, 4),
        "build_steps": total_steps,
        "projected_build_h": round((setup + per_step * total_steps) / 3600, 2),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--sizes",
        default="default,large",
        help=f"comma-separated model sizes, the first the baseline ({', '.join(TINY_SIZES)})",
    )
    parser.add_argument("--steps", type=int, default=20, help="optimizer steps timed per size")
    args = parser.parse_args(argv)
    sizes = [s.strip() for s in args.sizes.split(",") if s.strip()]
    unknown = [s for s in sizes if s not in TINY_SIZES]
    if unknown or not sizes:
        parser.error(
            f"unknown size {unknown[0]!r}; the sizes are {', '.join(TINY_SIZES)}"
            if unknown
            else "--sizes names no size"
        )
    if args.steps < WARMUP_STEPS + 2:
        parser.error(f"--steps must be at least {WARMUP_STEPS + 2} (the first {WARMUP_STEPS} are warm-up)")
    rows = []
    for size in sizes:
        row = time_steps(recipe_for(size), args.steps)
        rows.append(row)
        print(
            f"{size}: {row['step_s']:.3f} s/step after {row['setup_s']:.0f} s of setup; "
            f"the recipe's {row['build_steps']} steps: about {row['projected_build_h']:.2f} h"
        )
    base = rows[0]
    for row in rows[1:]:
        row["step_ratio"] = round(row["step_s"] / base["step_s"], 2)
        print(f"{row['size']}/{base['size']}: {row['step_ratio']:.2f}× the seconds per step")
    print(json.dumps({"steps": args.steps, "sizes": rows}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
