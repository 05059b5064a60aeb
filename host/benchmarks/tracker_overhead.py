"""What mirroring a run to TensorBoard, W&B and trackio costs an iteration, on CPU.

    .venv/bin/python host/benchmarks/tracker_overhead.py [--iterations 4] [--repeats 1] [--policy FOLDER]

Trains the same small run (the built-in worlds, B=2 tasks × N=2 rollouts, 5-step episodes, no
evaluation) with report_to empty and with all three trackers (W&B offline, trackio in a scratch
store), the arms alternated so that a change in the machine's load falls on both (each repeat in
the order off, on, on, off, so that a steady drift of the load cancels).
Prints, per arm, the mean seconds per iteration from the trainer's own metrics
(`time/total`, the first iteration left out: it warms up) with its spread over iterations, the
whole run's wall time (which includes starting and closing the trackers, off the iterations'
clock), the difference with a 95% interval (Welch), the CPU seconds the mirror's thread took in
the trainer's process (every call into the trackers included; it does not depend on the load),
and the load average before and after. Needs host/requirements-trackers.lock installed.
"""

from __future__ import annotations

import argparse
import logging
import math
import os
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from empo2 import metric_keys as metric  # noqa: E402
from empo2.config import TRACKERS, load_config  # noqa: E402
from empo2.run_folder.folder import RunFolder  # noqa: E402
from empo2.training.trainer import Trainer  # noqa: E402

SMALL_RUN = [
    "eval.every=0",
    "policy.device=cpu",
    "env.tasks=power-device,grow-plant",
    "env.max_steps=5",
    "algo.batch_tasks=2",
    "algo.group_size=2",
    "algo.minibatches=2",
    "policy.max_action_tokens=6",
    "policy.max_tip_tokens=12",
]


def one_run(root: Path, name: str, policy: str, iterations: int, trackers: list[str]) -> tuple[list[float], float]:
    config = load_config(
        "builtin",
        [
            *SMALL_RUN,
            f"iterations={iterations}",
            f"policy.model={policy}",
            f"report_to={','.join(trackers)}" if trackers else "report_to=[]",
        ],
    )
    config.root, config.name = str(root), name
    folder = RunFolder.create(root, name, config.to_dict())
    clock = time.perf_counter()
    Trainer(config, folder).run()
    wall = time.perf_counter() - clock
    return [m[metric.TIME_TOTAL] for m in folder.metrics()], wall


class MirrorCpu(logging.Handler):
    """The CPU seconds the mirror's thread reports when it stops (trackers/mirror.py)."""

    def __init__(self):
        super().__init__(logging.INFO)
        self.seconds: list[float] = []

    def emit(self, record: logging.LogRecord) -> None:
        found = re.search(r"in ([0-9.]+) s of CPU", record.getMessage())
        if found:
            self.seconds.append(float(found[1]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--iterations", type=int, default=4)
    parser.add_argument("--repeats", type=int, default=1, help="rounds of off, on, on, off")
    parser.add_argument("--policy", default="builtin:tiny", help="policy.model (default: builtin:tiny)")
    args = parser.parse_args()
    os.environ.setdefault("EMPO2_NO_PROGRESS", "1")
    os.environ["WANDB_MODE"] = "offline"
    with tempfile.TemporaryDirectory(prefix="empo2-trackers-") as scratch:
        os.environ["TRACKIO_DIR"] = str(Path(scratch) / "trackio")
        arms = {"off": [], "all three": []}
        walls = {"off": [], "all three": []}
        mirror_cpu = MirrorCpu()
        logging.getLogger("empo2.trackers").addHandler(mirror_cpu)
        logging.getLogger("empo2.trackers").setLevel(logging.INFO)
        load_before = os.getloadavg()
        off, on = ("off", []), ("all three", list(TRACKERS))
        for repeat in range(args.repeats):
            for arm, trackers in (off, on, on, off):
                name = f"{arm.replace(' ', '-')}-{repeat}-{len(walls[arm])}"
                times, wall = one_run(Path(scratch), name, args.policy, args.iterations, trackers)
                arms[arm] += times[1:]
                walls[arm].append(wall)
                print(
                    f"  {arm:9s} run {repeat}: iterations {', '.join(f'{t:.1f}' for t in times)} s; "
                    f"whole run {wall:.1f} s",
                    flush=True,
                )
        load_after = os.getloadavg()
    print(f"{'trackers':10s} {'s/iteration':>12s} {'stdev':>7s} {'n':>3s} {'whole run s':>12s}")
    for arm, times in arms.items():
        print(
            f"{arm:10s} {statistics.mean(times):12.2f} {statistics.stdev(times):7.2f} {len(times):3d} "
            f"{statistics.mean(walls[arm]):12.1f}"
        )
    a, b = arms["off"], arms["all three"]
    diff = statistics.mean(b) - statistics.mean(a)
    half = 1.96 * math.sqrt(statistics.variance(a) / len(a) + statistics.variance(b) / len(b))
    verdict = "within noise" if abs(diff) <= half else "beyond noise"
    print(
        f"difference {diff:+.2f} s per iteration ({diff / statistics.mean(a):+.1%}), 95% interval "
        f"[{diff - half:+.2f}, {diff + half:+.2f}]: {verdict}"
    )
    if mirror_cpu.seconds:
        print(
            f"the mirror's thread: {statistics.mean(mirror_cpu.seconds):.2f} s of CPU per run of "
            f"{args.iterations} iterations (runs: {', '.join(f'{x:.2f}' for x in mirror_cpu.seconds)})"
        )
    print(
        f"load average before {load_before[0]:.2f}/{load_before[1]:.2f}/{load_before[2]:.2f}, "
        f"after {load_after[0]:.2f}/{load_after[1]:.2f}/{load_after[2]:.2f} (1/5/15 min), {os.cpu_count()} cores"
    )


if __name__ == "__main__":
    main()
