"""The benchmark scripts run: the GPU check's code path on CPU (--smoke), env steps per adapter,
and the iteration time split. No GPU here: the real GPU check runs on a CUDA machine."""

from __future__ import annotations

import json
import os
import re
import statistics
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow
BENCH = Path(__file__).resolve().parents[1] / "benchmarks"


def _run(args, timeout=600):
    env = dict(os.environ, EMPO2_NO_PROGRESS="1", HF_HUB_OFFLINE="1")
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, timeout=timeout, env=env)


def test_gpu_check_smoke_runs_the_whole_path_on_cpu():
    result = _run([str(BENCH / "gpu_check.py"), "--smoke"])
    assert result.returncode == 0, result.stderr[-3000:]
    reports = json.loads(result.stdout.strip().splitlines()[-1])
    assert [r["strategy"] for r in reports] == ["ddp", "fsdp2"]  # both strategies, one run
    for report in reports:
        assert report["rollout_tokens_per_s"] > 0 and report["update_tokens_per_s"] > 0
    assert "rollout tokens/s" in result.stdout and "MFU" in result.stdout
    assert "fsdp2/ddp update_tokens_per_s" in result.stdout


def test_first_episode_prints_the_seconds_to_the_first_episode_and_metrics_from_a_clean_cache():
    result = _run(
        [
            str(BENCH / "first_episode.py"),
            "--repeats",
            "1",
            "env.max_steps=3",
            "algo.batch_tasks=1",
            "algo.group_size=2",
            "eval.every=0",
        ]
    )
    assert result.returncode == 0, result.stderr[-3000:]
    report = json.loads(result.stdout.strip().splitlines()[-1])
    median = report["median"]
    assert 0 < median["ready_s"] < median["first_episode_s"] <= median["first_metrics_s"]
    assert report["cache_after"] == []  # the shipped policy served; nothing was built or written
    assert "first iteration written / first episode streamed" in result.stdout


def test_episode_latency_times_both_roads_and_every_episode_arrives_one_by_one():
    result = _run(
        [
            str(BENCH / "episode_latency.py"),
            "--iterations",
            "1",
            "env.max_steps=3",
            "algo.batch_tasks=1",
            "algo.group_size=2",
        ]
    )
    assert result.returncode == 0, result.stderr[-3000:]
    report = json.loads(result.stdout.strip().splitlines()[-1])
    for road in ("own", "terminal"):  # the host's own run, and a terminal's it follows
        assert report[road]["episodes"] == report[road]["streamed"] == 2, report
        assert 0 < report[road]["median_s"] <= report[road]["max_s"]
    assert "a terminal's run" in result.stdout and "p95" in result.stdout


def test_env_steps_prints_steps_per_second_for_each_adapter():
    result = _run([str(BENCH / "env_steps.py"), "--seconds", "0.5", "--env", "all"])
    assert result.returncode == 0, result.stderr[-3000:]
    for name in ("built-in", "scienceworld", "textworld"):
        assert name in result.stdout


def test_iteration_split_prints_every_phase(tiny_policy):
    result = _run(
        [
            str(BENCH / "iteration_split.py"),
            "--policy",
            str(tiny_policy),
            "--iterations",
            "2",
            "--p-memory",
            "1",
            "algo.batch_tasks=1",
            "algo.group_size=2",
            "env.max_steps=3",
        ]
    )
    assert result.returncode == 0, result.stderr[-3000:]
    for phase in ("generation", "environment", "retrieval", "tips", "update"):
        assert phase in result.stdout


def test_the_tip_probe_reports_every_condition(tiny_policy):
    result = _run([str(BENCH / "probe_tips.py"), "--policy", str(tiny_policy), "--variations", "1", "--repeats", "1"])
    assert result.returncode == 0, result.stderr[-3000:]
    assert "4 held-out variations x 1 rollouts per condition" in result.stdout
    for condition in (
        "no memory",
        "success tip",
        "failure tip",
        "success text, no actions",
        "success text, failed actions",
    ):
        assert condition in result.stdout
    assert result.stdout.count("rooms visited:") == 5
    assert result.stdout.count("no-tip log π along the gold path") == 4  # 3 training kinds + held out
    assert "(repair-radio): go to <room> -" in result.stdout
    for writer in ("searched on after taking", "decoy delivered"):  # 3 training kinds each
        assert result.stdout.count(f"writer, {writer}") == 3
    # Per condition, valid actions as written and the first action against the gold path's: 4
    # episodes of at most 15 steps each; the tiny policy's success-tip line counts 4 first actions.
    valid = re.findall(
        r"valid actions [\d.]+% \((\d+)/(\d+)\); first action = the gold path's \d+% \((\d+)/4\)", result.stdout
    )
    assert len(valid) == 5 and all(int(v) <= int(n) <= 60 for v, n, _ in valid)
    # ... and the invalid actions written most often: named where some were invalid, else none.
    invalid = re.findall(r"invalid as written: (.*)", result.stdout)
    assert len(invalid) == 5
    for (v, n, _), line in zip(valid, invalid):
        assert (line == "none") == (v == n), line
    assert result.stdout.count("reflection after '") == 3  # --reflections' default, as written
    # ... and the invalid "go to"s split by whether the exits were in view.
    go_to = re.findall(
        r"invalid 'go to' with the exits in view (?:(\d+)% \((\d+)/(\d+)\)|– \(0\)), "
        r"without (?:(\d+)% \((\d+)/(\d+)\)|– \(0\))",
        result.stdout,
    )
    assert len(go_to) == 5
    for (v, n, _), line in zip(valid, go_to):
        invalid_go_to = sum(int(x or 0) for x in (line[1], line[4]))
        assert invalid_go_to <= int(n) - int(v)


def test_the_tip_probe_tells_invalid_rooms_in_view_of_the_exits_from_those_out_of_it():
    """A real built-in world (its correction off, so an invalid action returns "nothing
    happens ."): a room's description lists the exits, what "open" returns does not."""
    sys.path.insert(0, str(BENCH))
    import probe_tips
    from empo2.envs.builtin.env import BuiltinEnv
    from empo2.envs.builtin.tasks import ROOM_POOL

    counts = probe_tips.ActionCounts()
    env = probe_tips._ValidityCount(BuiltinEnv(max_steps=9, correct_actions=False), counts)
    env.reset("power-device", 100)
    absent = next(r for r in ROOM_POOL if r not in env.world.rooms)
    present = next(r for r in env.world.rooms if r != env.room)
    env.step(f"go to {absent}")  # the start room's description in view: invalid
    env.step(f"go to {present}")  # "nothing happens ." in view: valid
    env.step(f"open {env.world.container_of[present]}")
    env.step(f"go to {absent}")  # "you open the …" in view: invalid
    env.step(f"go to {absent}")  # "nothing happens ." in view: invalid
    assert counts.go_to == {True: [1, 1], False: [3, 2]}
    assert counts.go_to_line() == "invalid 'go to' with the exits in view 100% (1/1), without 67% (2/3)"


def test_the_tip_probe_probes_a_presets_worlds_at_an_overridden_step_limit(tiny_policy):
    result = _run(
        [
            str(BENCH / "probe_tips.py"),
            "--policy",
            str(tiny_policy),
            "--variations",
            "1",
            "--repeats",
            "1",
            "--preset",
            "builtin-bench",
            "env.max_steps=8",
        ]
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert "tasks ['power-device'], step limit 8" in result.stdout
    assert "2 held-out variations x 1 rollouts per condition" in result.stdout  # + the OOD kind
    assert result.stdout.count("writer, searched on after taking") == 1
    bad = _run([str(BENCH / "probe_tips.py"), "--policy", str(tiny_policy), "env.max_step=8"])
    assert bad.returncode == 2 and "Traceback" not in bad.stderr
    assert "max_step" in bad.stderr


def test_run_tips_measures_a_real_run_and_refuses_a_folder_that_is_not_one(tmp_path, tiny_policy):
    """A two-iteration run of the tiny policy with memory rollouts, then the script on its folder:
    both halves' tip accuracy and the six rollout conditions; a plain folder gets one sentence."""
    from conftest import tiny_run_overrides
    from empo2.config import load_config
    from empo2.run_folder.folder import RunFolder
    from empo2.training.trainer import Trainer

    config = load_config(tiny_run_overrides(tiny_policy, iterations=2, **{"eval.every": 0}))
    config.root, config.name = str(tmp_path), "run"
    Trainer(config, RunFolder.create(tmp_path, "run", config.to_dict())).run()
    result = _run([str(BENCH / "run_tips.py"), str(tmp_path / "run"), "--rollouts", "1"])
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.count("success tips naming the room the item was taken in") == 2
    assert result.stdout.count("failure tips claiming a success") == 2
    assert result.stdout.count("memory rollouts' success") == 2
    for mode in ("memory", "memory-free"):
        for half in ("first", "second"):
            assert result.stdout.count(f"invalid actions in {mode} rollouts, {half} half of the run: ") == 1
    # The tiny policy writes invalid actions in its memory rollouts (p = 1: there are no others):
    # what they were, by verb, with the share that repeat a shown tip's action.
    kinds = [line for line in result.stdout.splitlines() if "rollouts, by verb: " in line]
    assert len(kinds) == 1 and kinds[0].startswith("invalid actions in memory rollouts"), result.stdout
    assert re.search(r"by verb: .+ \d+%; a shown tip's action: \d+\.\d%; most written: '.*' \d+%", kinds[0]), kinds
    for condition in ("no memory", "own memory", "gold tip"):
        assert result.stdout.count(f" {condition} ") == 2, result.stdout  # checkpoint 2, warm start
    assert result.stdout.count("%  valid actions ") == 6  # as written, per policy and condition
    assert "checkpoint 2" in result.stdout
    refused = _run([str(BENCH / "run_tips.py"), str(tmp_path)])
    assert refused.returncode == 2 and "is not a run folder" in refused.stderr
    assert "Traceback" not in refused.stderr


def test_serve_startup_measures_both_paths_of_the_real_host():
    result = _run([str(BENCH / "serve_startup.py"), "--repeats", "1", "--settle", "0"])
    assert result.returncode == 0, result.stderr[-3000:]
    report = json.loads(result.stdout.strip().splitlines()[-1])
    for path in ("lazy", "eager"):
        assert report["median"][path]["ready_s"] > 0 and report["median"][path]["idle_rss_mib"] > 0
    assert "eager / lazy: ready" in result.stdout


def test_build_speed_times_each_size_on_the_same_batches_and_projects_the_whole_build():
    from empo2.policy.builtin import BuiltinRecipe
    from empo2.policy.demos import PromptShape, demonstration_examples
    from empo2.policy.imitation import steps_per_epoch

    result = _run([str(BENCH / "build_speed.py"), "--sizes", "tiny,tiny", "--steps", "5"])
    assert result.returncode == 0, result.stderr[-3000:]
    report = json.loads(result.stdout.strip().splitlines()[-1])
    recipe = BuiltinRecipe()
    examples = demonstration_examples(
        recipe.episodes, recipe.seed, PromptShape(recipe.history_steps, recipe.observation_words), recipe.max_steps
    )
    build_steps = steps_per_epoch(len(examples), recipe.batch_size) * recipe.epochs
    first, second = report["sizes"]
    for row in (first, second):
        assert row["build_steps"] == build_steps and row["step_s"] > 0
        assert row["projected_build_h"] == pytest.approx(
            (row["setup_s"] + row["step_s"] * build_steps) / 3600, abs=0.01
        )
    assert second["step_ratio"] == pytest.approx(second["step_s"] / first["step_s"], abs=0.01)
    assert "tiny/tiny:" in result.stdout
    bad = _run([str(BENCH / "build_speed.py"), "--sizes", "huge"])
    assert bad.returncode == 2 and "unknown size 'huge'" in bad.stderr and "Traceback" not in bad.stderr


def test_the_build_fingerprint_repeats_on_one_machine_and_moves_with_every_step(tmp_path):
    from empo2.bench.provenance import weights_sha256
    from empo2.policy.builtin import build_builtin_policy, recipe_for

    def sha(steps):
        result = _run([str(BENCH / "build_fingerprint.py"), "--size", "tiny", "--steps", str(steps)])
        assert result.returncode == 0, result.stderr[-3000:]
        row = json.loads(result.stdout.strip().splitlines()[-1])
        assert row["size"] == "tiny" and row["steps"] == steps and row["cpu"]
        assert f"tiny after {steps} steps on " in result.stdout
        return row["sha256"]

    first = sha(2)
    assert first == sha(2) != sha(3)
    # The script's hash is the stopped build's saved weights, as a bench records them.
    report = build_builtin_policy(recipe_for("tiny"), tmp_path / "policy", stop_after=2)
    assert report["stopped_after_steps"] == 2 and report["epoch_losses"] == []
    assert weights_sha256(tmp_path / "policy") == first
    for bad, message in (
        (["--steps", "0"], "expected a whole number of steps above zero, got '0'"),
        (["--size", "huge"], "unknown size 'huge'"),
    ):
        refused = _run([str(BENCH / "build_fingerprint.py"), *bad])
        assert refused.returncode == 2 and message in refused.stderr and "Traceback" not in refused.stderr


SCRIPTS = sorted(p.name for p in BENCH.glob("*.py") if 'if __name__ == "__main__":' in p.read_text())


@pytest.fixture(scope="module")
def help_of_each_script() -> dict:
    # One process for all of them (help_of_each_support.py): torch and transformers load once.
    result = _run([str(Path(__file__).with_name("help_of_each_support.py")), str(BENCH), *SCRIPTS], timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(result.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("script", SCRIPTS)
def test_every_benchmark_script_starts(script, help_of_each_script):
    """`--help` imports the whole script: a module moved under it (rerun_effect.py once imported
    the demonstrations from their old home and could not start) fails here, not on the day the
    figure is needed."""
    status, printed = help_of_each_script[script]
    assert status == 0, printed[-3000:]
    assert "usage:" in printed


def _rerun_part(tmp_path, name, seed, episodes=8):
    rows = [
        {
            "seed": seed,
            "condition": c,
            "before": 0.0,
            "after": gain,
            "variations": {"power-device/0": {"before": 0.0, "after": gain}},
        }
        for c, gain in (("correct", 0.5 + seed / 10), ("wrong", 0.0), ("none", 0.1))
    ]
    part = {
        "preset": "builtin",
        "parent_iterations": 1,
        "parent_overrides": "",
        "episodes": episodes,
        "iterations": 3,
        "eval_episodes": 16,
        "seeds": str(seed),
        "rows": rows,
    }
    path = tmp_path / name
    path.write_text(json.dumps(part))
    return path


def test_the_rerun_bench_merges_seeds_run_apart(tmp_path):
    out = tmp_path / "rerun.json"
    result = _run(
        [
            str(BENCH / "rerun_effect.py"),
            "--merge",
            str(_rerun_part(tmp_path, "b.json", 1)),
            str(_rerun_part(tmp_path, "a.json", 0)),
            "--out",
            str(out),
        ],
        timeout=300,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    summary = json.loads(out.read_text())
    assert [(r["seed"], r["condition"]) for r in summary["rows"]] == [
        (0, "correct"),
        (0, "wrong"),
        (0, "none"),
        (1, "correct"),
        (1, "wrong"),
        (1, "none"),
    ]
    assert summary["seeds"] == "0,1"
    assert summary["mean_gain"]["correct"] == pytest.approx(0.55)
    assert summary["correct_minus_none"]["cells"] == 2
    assert summary["correct_minus_none"]["mean"] == pytest.approx(0.45)
    low, high = summary["gain_ci95"]["correct"]
    assert 0.5 <= low <= high <= 0.6
    # The t-interval over 2 cells: 0.55 ± t(0.975, 1) · 0.0707 / √2, far wider than the bootstrap.
    assert summary["gain_t95"]["correct"] == pytest.approx([0.55 - 0.6353, 0.55 + 0.6353], abs=1e-3)
    assert summary["wrong_minus_none"]["mean"] == pytest.approx(-0.1)
    assert summary["wrong_minus_none"]["t95"] == pytest.approx([-0.1, -0.1])


def _contrast_part(tmp_path, seeds, episodes=8):
    """r7's conditions, two cells per seed, already run (as a cut-short bench leaves them)."""
    rows = [
        {
            "seed": seed,
            "condition": c,
            "before": 0.0,
            "after": gain,
            "variations": {f"power-device/{v}": {"before": 0.0, "after": gain + v / 10 + seed / 100} for v in (0, 1)},
        }
        for seed in seeds
        for c, gain in (("correct-contrast", 0.5), ("none-contrast", 0.1), ("correct", 0.2))
    ]
    part = {
        "preset": "builtin",
        "parent_iterations": 1,
        "parent_overrides": "",
        "episodes": episodes,
        "iterations": 3,
        "eval_episodes": 16,
        "seeds": ",".join(map(str, seeds)),
        "rows": rows,
    }
    path = tmp_path / "rerun.json"
    path.write_text(json.dumps(part))
    return path


CONTRAST_ARGS = [
    "--conditions",
    "correct-contrast,none-contrast,correct",
    "--episodes",
    "8",
    "--iterations",
    "3",
    "--eval-episodes",
    "16",
]


def test_the_rerun_bench_resumes_without_rerunning_its_rows_and_pairs_r7s_conditions(tmp_path):
    out = _contrast_part(tmp_path, [700, 701, 702])
    result = _run(
        [str(BENCH / "rerun_effect.py"), "--resume", "--seeds", "700,701,702", *CONTRAST_ARGS, "--out", str(out)],
        timeout=300,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    summary = json.loads(out.read_text())
    assert len(summary["rows"]) == 9  # nothing was missing, nothing ran again
    contrast = summary["correct_contrast_minus_none_contrast"]
    assert contrast["cells"] == 6 and contrast["seeds"] == 3
    assert contrast["mean"] == pytest.approx(0.4) and contrast["t95"] == pytest.approx([0.4, 0.4])
    assert summary["correct_contrast_minus_correct"]["mean"] == pytest.approx(0.3)
    assert "correct_minus_none" not in summary  # r5's pair: `none` did not run


def test_the_rerun_bench_refuses_to_resume_a_file_run_differently(tmp_path):
    out = _contrast_part(tmp_path, [700], episodes=4)
    result = _run(
        [str(BENCH / "rerun_effect.py"), "--resume", "--seeds", "700", *CONTRAST_ARGS, "--out", str(out)], timeout=300
    )
    assert result.returncode == 2
    assert result.stderr.strip().count("\n") == 0 and "cannot be resumed" in result.stderr


def test_the_rerun_bench_refuses_to_merge_parts_run_differently(tmp_path):
    result = _run(
        [
            str(BENCH / "rerun_effect.py"),
            "--merge",
            str(_rerun_part(tmp_path, "a.json", 0)),
            str(_rerun_part(tmp_path, "b.json", 1, episodes=4)),
            "--out",
            str(tmp_path / "o.json"),
        ],
        timeout=300,
    )
    assert result.returncode == 2
    assert result.stderr.strip().count("\n") == 0 and "cannot be merged" in result.stderr


def _bench_part(tmp_path, name, seeds, overrides=("env.max_steps=9",)):
    """A results.json as `empo2-host bench` writes it, cut to the fields compare_arms reads."""
    protocol = {
        "preset": "builtin-bench",
        "overrides": list(overrides),
        "policy": "p",
        "env_step_budget": 6000,
        "eval_episodes": 240,
        "eval_temperature": 0.4,
    }
    runs = [
        {
            "method": method,
            "seed": seed,
            "train_success": value + seed / 100,
            "held_out_success": value / 2,
            "auc": value / 4,
        }
        for seed in seeds
        for method, value in (("EMPO² (3 tips)", 0.9), ("GRPO", 0.5))
    ]
    path = tmp_path / name
    path.write_text(json.dumps({"protocol": protocol, "runs": runs}))
    return path


def test_compare_arms_pools_the_parts_of_one_experiment_and_pairs_them_by_seed(tmp_path):
    out = tmp_path / "summary.json"
    result = _run(
        [
            str(BENCH / "compare_arms.py"),
            str(_bench_part(tmp_path, "a.json", [20, 21])),
            str(_bench_part(tmp_path, "b.json", [22, 23, 24])),
            "--method",
            "EMPO² (3 tips)",
            "--baseline",
            "GRPO",
            "--json",
            str(out),
        ],
        timeout=300,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert "paired on seeds 20, 21, 22, 23, 24" in result.stdout
    summaries = {s["metric"]: s for s in json.loads(out.read_text())["summaries"]}
    primary = summaries["train_success"]
    assert primary["differences"] == pytest.approx([0.4] * 5)
    assert primary["ci95"] == pytest.approx([0.4, 0.4])
    assert primary["ratio"] == pytest.approx(
        statistics.fmean([0.9 + s / 100 for s in range(20, 25)])
        / statistics.fmean([0.5 + s / 100 for s in range(20, 25)])
    )
    assert summaries["auc"]["mean_difference"] == pytest.approx(0.1)


@pytest.mark.parametrize(
    "second, message",
    [
        (lambda tmp: _bench_part(tmp, "b.json", [22], overrides=("env.max_steps=12",)), "cannot be pooled"),
        (lambda tmp: _bench_part(tmp, "b.json", [21, 22]), "a seed is counted once"),
    ],
)
def test_compare_arms_refuses_parts_it_cannot_pool_in_one_sentence(tmp_path, second, message):
    result = _run(
        [
            str(BENCH / "compare_arms.py"),
            str(_bench_part(tmp_path, "a.json", [20, 21])),
            str(second(tmp_path)),
            "--method",
            "EMPO² (3 tips)",
            "--baseline",
            "GRPO",
        ],
        timeout=300,
    )
    assert result.returncode == 2
    assert result.stderr.strip().count("\n") == 0 and message in result.stderr


R1 = Path(__file__).resolve().parents[2] / "docs" / "bench" / "r1-regime"


def test_tip_reading_makes_the_regime_bench_tables_again_from_its_committed_probes(tmp_path):
    """r1's RESULTS.md was written from these files; the tool must give its numbers back."""
    out = tmp_path / "tips.json"
    result = _run(
        [
            str(BENCH / "tip_reading.py"),
            str(R1 / "results.json"),
            str(R1 / "probes"),
            "--baseline",
            "EMPO²",
            "--json",
            str(out),
        ],
        timeout=300,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert "| EMPO², seed 40 | 60.9% | 48.4% | 73.1% → 58.4% | 19.3% |" in result.stdout
    assert "| GRPO, seed 41 | 89.1% | 98.4% | (no memory rollouts) | 20.2% |" in result.stdout
    arms = {a["method"]: a for a in json.loads(out.read_text())["arms"]}
    assert [a["runs"] for a in arms.values()] == [10, 10, 10, 10]
    low_rate = arms["EMPO² (lr 5e-5)"]
    assert low_rate["following_mean"] == pytest.approx(90.5, abs=0.05)
    assert low_rate["invalid_memory_second_half_mean"] == pytest.approx(56.3, abs=0.05)
    assert low_rate["bars_met"] is False
    versus = low_rate["following_minus_baseline"]
    assert (versus["seeds"], round(versus["mean"], 1)) == (10, 32.0)
    assert [round(x, 1) for x in versus["t95"]] == [8.3, 55.8]
    assert arms["GRPO"]["invalid_memory_second_half_mean"] is None and arms["GRPO"]["bars_met"] is None


@pytest.mark.parametrize(
    "args, message",
    [
        (lambda tmp: [str(R1 / "results.md"), str(R1 / "probes")], "is not a bench results.json"),
        (lambda tmp: [str(R1 / "results.json"), str(tmp)], "holds no probe of any run"),
        (lambda tmp: [str(R1 / "results.json"), str(R1 / "probes"), "--baseline", "PPO"], "no probed run of the arm"),
    ],
)
def test_tip_reading_refuses_what_it_cannot_read_in_one_sentence(tmp_path, args, message):
    result = _run([str(BENCH / "tip_reading.py"), *args(tmp_path)], timeout=300)
    assert result.returncode == 2
    assert result.stderr.strip().count("\n") == 0 and message in result.stderr and "Traceback" not in result.stderr


def test_the_ood_memory_bench_pairs_both_arms_per_seed_and_resumes_only_what_it_lacks(tmp_path, tiny_policy):
    out = tmp_path / "results.json"
    args = [
        str(BENCH / "ood_memory_trials.py"),
        "--model",
        str(tiny_policy),
        "--preset",
        "builtin-smoke",
        "--trials",
        "2",
        "--variations",
        "1",
        "--out",
        str(out),
    ]
    result = _run([*args, "--seeds", "3"])
    assert result.returncode == 0, result.stderr[-3000:]
    first = json.loads(out.read_text())
    assert [(r["seed"], r["arm"]) for r in first["rows"]] == [(3, "memory"), (3, "memory-free")]
    memory, free = first["rows"]
    assert len(memory["success_by_trial"]) == len(free["score_by_trial"]) == 2
    assert memory["score_by_trial"][0] == free["score_by_trial"][0]  # round 1 is shared
    later = first["summary"]["comparisons"]["score_later_mean"]
    assert later["seeds"] == [3]
    assert later["mean_difference"] == pytest.approx(memory["score_by_trial"][1] - free["score_by_trial"][1])
    assert first["summary"]["curves"]["memory-free"]["score"] == free["score_by_trial"]

    resumed = _run([*args, "--seeds", "3", "--resume"])
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    assert json.loads(out.read_text()) == first  # seed 3 was there: nothing played again

    refused = _run([*args[:-6], "--trials", "3", "--variations", "1", "--out", str(out), "--seeds", "3", "--resume"])
    assert refused.returncode == 2 and "cannot be resumed" in refused.stderr
    assert "Traceback" not in refused.stderr
