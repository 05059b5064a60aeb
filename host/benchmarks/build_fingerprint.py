"""Do two machines build the same built-in policy? The sha256 of the weights after the first
`--steps` optimizer steps of the real build, in a minute or two rather than the whole build's
hour; run it on both machines and compare the last line.

    .venv/bin/python host/benchmarks/build_fingerprint.py --size large --steps 30
    MKL_CBWR=AVX2 .venv/bin/python host/benchmarks/build_fingerprint.py --size large

The same recipe built on another CPU can be another policy: the processors' matrix kernels
round differently and the imitation carries the difference on (docs/bench/r4-size/AMENDMENT-2.md:
the large policy followed a gold tip 64/64 built on an Intel Xeon, 53/64 on an AMD EPYC). On one
machine the build repeats exactly. The line says which kernels ran: the CPU, torch's vector
instruction set (`ATEN_CPU_CAPABILITY` chooses it) and `MKL_CBWR` (MKL's code path), the
settings to try when two machines disagree. Nothing reaches the cache.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from empo2.bench.provenance import cpu_model, weights_sha256  # noqa: E402
from empo2.cli.parser import positive_float  # noqa: E402
from empo2.policy.builtin import build_builtin_policy, recipe_for  # noqa: E402
from empo2.policy.model import TINY_SIZES  # noqa: E402


def fingerprint(size: str, steps: int, lr: float | None = None) -> dict:
    """The build of `size`'s recipe stopped after `steps` steps: its weights' sha256 and what
    chose the kernels that computed them."""
    import torch

    recipe = recipe_for(size, lr=lr)
    with tempfile.TemporaryDirectory(prefix="empo2-build-fingerprint-") as scratch:
        build_builtin_policy(recipe, Path(scratch) / "policy", stop_after=steps)
        sha = weights_sha256(Path(scratch) / "policy")
    return {
        "size": size,
        "lr": recipe.lr,
        "steps": steps,
        "cpu": cpu_model(),
        "torch": torch.__version__,
        "cpu_capability": torch.backends.cpu.get_cpu_capability(),
        "mkl_cbwr": os.environ.get("MKL_CBWR", ""),
        "threads": torch.get_num_threads(),
        "sha256": sha,
    }


def _at_least_one(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number of steps above zero, got {text!r}")
    return value


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", default="default", help=f"one of {', '.join(TINY_SIZES)}")
    parser.add_argument("--steps", type=_at_least_one, default=30, help="optimizer steps before the hash")
    parser.add_argument("--lr", type=positive_float, default=None, help="the peak rate (default: the size's own)")
    args = parser.parse_args(argv)
    if args.size not in TINY_SIZES:
        parser.error(f"unknown size {args.size!r}; the sizes are: {', '.join(TINY_SIZES)}")
    row = fingerprint(args.size, args.steps, args.lr)
    print(
        f"{row['size']} after {row['steps']} steps on {row['cpu']} (torch {row['torch']}, "
        f"{row['cpu_capability']}, MKL_CBWR={row['mkl_cbwr'] or 'unset'}): {row['sha256']}"
    )
    print(json.dumps(row))
    return 0


if __name__ == "__main__":
    sys.exit(main())
