"""The bench's statistics, its plan of runs, and one end-to-end bench on the tiny policy."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from empo2.bench.arms import ABLATIONS, ARMS, DEFAULT_ARMS
from empo2.bench.runner import bench_jobs, chosen_arms, markdown, run_bench, summarise
from empo2.bench.stats import (
    MIN_CLAIM_SEEDS,
    bca_ci,
    bootstrap_ci,
    claimed,
    curve_auc,
    paired_summary,
    student_t_cdf,
    student_t_quantile,
    t_interval,
)
from empo2.bench.svg import learning_curves_svg, mean_curve
from empo2.config import load_config
from empo2.training.run_control import TrainerHooks
from test_distributed import _metrics


def test_auc_is_the_mean_success_over_the_budget():
    assert curve_auc([[0, 0.0], [100, 1.0]], 100) == pytest.approx(0.5)
    assert curve_auc([[50, 1.0]], 100) == pytest.approx(1.0)  # held flat on both sides
    assert curve_auc([[25, 0.0], [75, 1.0]], 100) == pytest.approx((0 + 50 * 0.5 + 25 * 1.0) / 100)
    assert curve_auc([], 100) == 0.0


def test_bootstrap_ci_brackets_the_mean_and_shrinks_to_a_point_for_equal_differences():
    low, high = bootstrap_ci([0.1, 0.2, 0.3, 0.4, 0.5])
    assert low < 0.3 < high and 0.1 <= low and high <= 0.5
    assert bootstrap_ci([0.2] * 5) == pytest.approx([0.2, 0.2])
    assert bootstrap_ci([0.1, -0.3, 0.2]) == bootstrap_ci([0.1, -0.3, 0.2])  # seeded


@pytest.mark.parametrize("df, quantile", [(1, 12.7062), (2, 4.3027), (4, 2.7764), (9, 2.2622), (29, 2.0452)])
def test_the_t_quantile_is_the_tables(df, quantile):
    assert student_t_quantile(0.975, df) == pytest.approx(quantile, abs=1e-4)
    assert student_t_cdf(0.0, df) == pytest.approx(0.5)
    assert student_t_cdf(-quantile, df) == pytest.approx(0.025, abs=2e-5)  # the table rounds t


def test_the_t_interval_is_mean_plus_minus_t_times_the_standard_error():
    differences = [0.1, -0.3, 0.2, 0.5, -0.05]
    n = len(differences)
    mean = sum(differences) / n
    sd = (sum((d - mean) ** 2 for d in differences) / (n - 1)) ** 0.5
    low, high = t_interval(differences)
    assert (low, high) == pytest.approx((mean - 2.7764 * sd / n**0.5, mean + 2.7764 * sd / n**0.5), abs=1e-4)
    # At five seeds it is wider than the percentile bootstrap, which under-covers there.
    boot = bootstrap_ci(differences)
    assert low < boot[0] and boot[1] < high
    assert all(x != x for x in t_interval([0.3]))  # nan with one pair


def test_bca_brackets_the_mean_moves_with_skew_and_shrinks_to_a_point():
    skewed = [0.0, 0.0, 0.0, 0.05, 0.9]
    low, high = bca_ci(skewed)
    mean = sum(skewed) / 5
    assert low < mean < high
    assert (low, high) != tuple(bootstrap_ci(skewed))  # corrected, not the percentile interval
    assert bca_ci([0.2] * 5) == pytest.approx([0.2, 0.2])


def test_a_difference_is_claimed_only_when_the_t_interval_excludes_zero():
    assert claimed([0.01, 0.4]) and claimed([-0.4, -0.01])
    assert not claimed([-0.01, 0.4]) and not claimed([float("nan"), float("nan")])
    runs = [{"method": m, "seed": s, "m": v} for s in range(10) for m, v in (("A", 0.5 + 0.01 * s), ("B", 0.2))]
    summary = paired_summary(runs, "A", "B", "m")
    assert summary["claimed"] and summary["t95"][0] > 0
    noisy = [{"method": "A", "seed": s, "m": 0.2 + (0.5 if s % 2 else -0.45)} for s in range(5)]
    noisy += [{"method": "B", "seed": s, "m": 0.2} for s in range(5)]
    summary = paired_summary(noisy, "A", "B", "m")
    assert summary["ci95"][0] > 0 or not summary["claimed"]  # the bootstrap alone may not claim it
    assert not summary["claimed"]
    # A clear difference on fewer than 10 paired seeds is reported, never claimed.
    few = paired_summary([r for r in runs if r["seed"] < 9], "A", "B", "m")
    assert few["t95"][0] > 0 and not few["claimed"]


# Ten paired differences on which the three intervals disagree about zero.
BOOTSTRAPS_ONLY = [0.29, 0.32, 0.11, -0.01, -0.06, 0.1, -0.05, -0.12, 0.13, 0.12]  # t-interval holds 0
T_AND_PERCENTILE = [0.5, 0.54, 0.51, 0.57, 0.53, 0.45, 0.52, 0.5, 0.5, -0.7]  # BCa holds 0


def _paired_runs(differences, metrics=("m",), method="A", baseline="B"):
    runs = [{"method": method, "seed": s, **{m: 0.2 + d for m in metrics}} for s, d in enumerate(differences)]
    return runs + [{"method": baseline, "seed": s, **{m: 0.2 for m in metrics}} for s in range(len(differences))]


def test_the_claim_follows_the_paired_t_interval_where_the_bootstraps_disagree():
    """Only the paired t-interval decides: a difference both bootstrap intervals would claim is
    not claimed when the t-interval holds zero, and one the t-interval excludes zero from is
    claimed though BCa holds zero. Claiming on any other interval fails one of the two."""
    assert len(BOOTSTRAPS_ONLY) == len(T_AND_PERCENTILE) == MIN_CLAIM_SEEDS
    doubtful = paired_summary(_paired_runs(BOOTSTRAPS_ONLY), "A", "B", "m")
    assert claimed(doubtful["ci95"]) and claimed(doubtful["bca95"]) and not claimed(doubtful["t95"])
    assert not doubtful["claimed"]
    clear = paired_summary(_paired_runs(T_AND_PERCENTILE), "A", "B", "m")
    assert claimed(clear["t95"]) and claimed(clear["ci95"]) and not claimed(clear["bca95"])
    assert clear["claimed"]
    # The bench's own verdict is the primary comparison's, decided the same way.
    metrics = ("train_success", "held_out_success", "auc")
    for differences, verdict in ((BOOTSTRAPS_ONLY, False), (T_AND_PERCENTILE, True)):
        summary = summarise(_paired_runs(differences, metrics, "EMPO²", "GRPO"), "held_out_success")
        assert summary["claimed"] is verdict and summary["primary"]["claimed"] is verdict


def test_no_difference_is_claimed_on_fewer_paired_seeds_than_the_minimum():
    """MIN_CLAIM_SEEDS paired seeds claim a clear difference; one fewer never does, counting only
    the seeds both arms ran (a seed one arm lacks is not a pair)."""
    assert MIN_CLAIM_SEEDS >= 10
    steady = [0.3 + 0.01 * s for s in range(MIN_CLAIM_SEEDS)]
    assert paired_summary(_paired_runs(steady), "A", "B", "m")["claimed"]
    fewer = paired_summary(_paired_runs(steady[:-1]), "A", "B", "m")
    assert fewer["t95"][0] > 0.25 and not fewer["claimed"]
    unpaired = [r for r in _paired_runs(steady) if not (r["method"] == "B" and r["seed"] == 0)]
    lacking = paired_summary(unpaired, "A", "B", "m")
    assert len(lacking["seeds"]) == MIN_CLAIM_SEEDS - 1 and lacking["t95"][0] > 0.25
    assert not lacking["claimed"]


def test_paired_summary_pairs_by_seed_and_skips_unpaired_runs():
    runs = [{"method": "A", "seed": s, "m": a} for s, a in [(0, 0.4), (1, 0.6), (2, 0.9)]]
    runs += [{"method": "B", "seed": s, "m": b} for s, b in [(0, 0.2), (1, 0.3)]]
    summary = paired_summary(runs, "A", "B", "m")
    assert summary["seeds"] == [0, 1] and summary["differences"] == pytest.approx([0.2, 0.3])
    assert summary["mean_difference"] == pytest.approx(0.25) and summary["ratio"] == pytest.approx(2.0)
    zero = paired_summary([{"method": "A", "seed": 0, "m": 0.5}, {"method": "B", "seed": 0, "m": 0.0}], "A", "B", "m")
    assert zero["ratio"] is None


def test_the_plan_runs_every_arm_on_every_seed_and_ablations_on_theirs(tmp_path):
    jobs = bench_jobs([0, 1, 2], [0], "builtin-bench", [], tmp_path, 240, 10)
    assert jobs[0]["method"] == "warm start (no RL)" and not jobs[0]["train"]
    trained = [(j["method"], j["seed"]) for j in jobs[1:]]
    assert sorted(trained) == sorted([(m, s) for m in DEFAULT_ARMS for s in (0, 1, 2)] + [(m, 0) for m in ABLATIONS])
    assert len({j["name"] for j in jobs}) == len(jobs)
    assert {j["budget"] for j in jobs} == {6000}


def test_a_subset_of_arms_runs_seed_by_seed_and_must_hold_the_primary_comparison(tmp_path):
    arms = chosen_arms(["GRPO", "EMPO²"])
    assert list(arms) == ["EMPO²", "GRPO"]  # ARMS' order, whatever the order named
    jobs = bench_jobs([0, 1], [], "builtin-bench", [], tmp_path, 240, 10, arms)
    assert [(j["method"], j["seed"]) for j in jobs[1:]] == [("EMPO²", 0), ("GRPO", 0), ("EMPO²", 1), ("GRPO", 1)]
    assert chosen_arms(None) == {m: ARMS[m] for m in DEFAULT_ARMS} and set(DEFAULT_ARMS) < set(ARMS)
    with pytest.raises(ValueError, match="unknown arm 'PPO'"):
        chosen_arms(["EMPO²", "GRPO", "PPO"])
    with pytest.raises(ValueError, match="must include EMPO² and GRPO"):
        chosen_arms(["EMPO²", "GRPO + novelty"])


def test_the_grpo_arm_at_the_default_lr_keeps_it_whatever_lr_every_arm_is_given(tmp_path):
    """A bench may give every arm EMPO²'s lr on its command line (r1's 5e-5); this arm stays GRPO
    as every earlier bench ran it."""
    jobs = bench_jobs(
        [0], [], "builtin-bench", ["algo.lr=5e-5"], tmp_path, 240, 10, chosen_arms(["EMPO²", "GRPO", "GRPO (lr 2e-4)"])
    )
    lr = {j["method"]: load_config(j["preset"], j["overrides"]).algo.lr for j in jobs[1:]}
    assert lr == {"EMPO²": 5e-5, "GRPO": 5e-5, "GRPO (lr 2e-4)": load_config("builtin-bench").algo.lr}


@pytest.mark.parametrize("method", sorted(ARMS) + sorted(ABLATIONS))
def test_every_arm_is_a_valid_config_on_the_bench_preset(method):
    overrides = {**ARMS, **ABLATIONS}[method]
    config = load_config("builtin-bench", overrides)
    for item in overrides:  # each override took, none was silently left at its default
        key, _, value = item.partition("=")
        node = config
        for part in key.split("."):
            node = getattr(node, part)
        assert str(node) == value or node == float(value)


def test_learning_curves_svg_is_well_formed():
    series = {"EMPO²": mean_curve([[[100, 0.1], [200, 0.5]], [[150, 0.3]]], 200, points=4), "GRPO <paper>": []}
    root = ET.fromstring(learning_curves_svg(series, 200, "curves"))
    assert root.tag.endswith("svg") and len(root.findall("{http://www.w3.org/2000/svg}polyline")) == 1
    assert series["EMPO²"][-1] == (200, pytest.approx(0.4))


@pytest.mark.slow
def test_a_tiny_bench_writes_paired_records_curves_and_a_summary(tmp_path, tiny_policy):
    report = run_bench(
        [0],
        tmp_path / "out",
        tmp_path / "runs",
        overrides=[
            f"policy.model={tiny_policy}",
            "max_env_steps=60",
            "algo.batch_tasks=2",
            "algo.group_size=2",
            "env.max_steps=5",
            "policy.max_action_tokens=6",
            "policy.max_tip_tokens=12",
        ],
        eval_episodes=4,
        ood_trials=1,
        workers=1,
    )
    saved = json.loads((tmp_path / "out" / "results.json").read_text())
    assert saved["summary"]["ratio"] == report["summary"]["ratio"]
    assert saved["complete"] and saved["finished_runs"] == saved["planned_runs"] == 1 + len(DEFAULT_ARMS)
    methods = [r["method"] for r in saved["runs"]]
    assert methods == ["warm start (no RL)", *DEFAULT_ARMS]
    for run in saved["runs"]:
        assert {"method", "seed", "env_steps", "train_success", "held_out_success"} <= set(run)
        assert run["train_episodes"] >= 4 and run["held_out_episodes"] >= 4
        if run["method"] != "warm start (no RL)":
            assert run["env_steps"] >= 60
        if run["method"].startswith("GRPO"):  # every iteration memory-free: a point each
            assert len(run["curve"]) == run["iterations"] and run["auc"] is not None
            assert run["off_policy_optimizer_steps"] == 0
        # The fixed algo.minibatches=2 a trained iteration; the off-policy ones among them.
        assert run["optimizer_steps"] == 2 * run["iterations"] >= run["off_policy_optimizer_steps"]
    assert saved["summary"]["primary"]["seeds"] == [0]
    # Paired seeds: every arm of seed 0 trained on the same tasks in the same order.
    tasks = {}
    for folder in sorted((tmp_path / "runs").iterdir()):
        by_iteration: dict[int, list] = {}
        for s in _summaries(folder):
            by_iteration.setdefault(s["iteration"], []).append((s["task"], s["variation"]))
        tasks[folder.name] = [sorted(by_iteration[i]) for i in sorted(by_iteration)]
    assert len(tasks) == len(DEFAULT_ARMS)
    shortest = min(len(t) for t in tasks.values())
    assert shortest >= 3 and len({str(t[:shortest]) for t in tasks.values()}) == 1
    assert (tmp_path / "out" / "learning-curves.svg").read_text().startswith("<svg")


def _summaries(path):
    from empo2.run_folder.folder import RunFolder

    return list(RunFolder.open(path).trajectory_summaries())


def _finish_the_warm_start_then_die(job):
    # A stand-in for the worker: training runs cannot fit a fast test, and the point here is
    # what is on disk when a bench stops after its first run.
    if job["train"]:
        raise RuntimeError("the machine went away")
    return _stand_in_record(job, iterations=0, env_steps=0, train_success=0.25, overrides=[])


def _stand_in_record(job, **values):
    """A run's record as the worker returns it, with the stand-in's numbers."""
    return dict(
        {
            "method": job["method"],
            "seed": job["seed"],
            "overrides": job["overrides"],
            "train_episodes": 240,
            "held_out_success": 0.0,
            "held_out_episodes": 240,
            "auc": None,
            "curve": [],
            "ood_success_by_trial": [],
            "ood_score_by_trial": [],
            "seconds": 1.0,
        },
        **values,
    )


def test_a_bench_stopped_early_keeps_its_finished_runs_on_disk(tmp_path, monkeypatch):
    import empo2.bench.runner as bench

    monkeypatch.setattr(bench, "_train_and_evaluate", _finish_the_warm_start_then_die)
    monkeypatch.setattr("empo2.training.trainer.resolve_model", lambda model: model)
    with pytest.raises(RuntimeError, match="went away"):
        run_bench([0], tmp_path / "out", tmp_path / "runs", workers=1, arms=["EMPO²", "GRPO"])
    saved = json.loads((tmp_path / "out" / "results.json").read_text())
    assert not saved["complete"] and (saved["finished_runs"], saved["planned_runs"]) == (1, 3)
    assert [r["method"] for r in saved["runs"]] == ["warm start (no RL)"]
    assert saved["protocol"]["arms"] == ["EMPO²", "GRPO"]
    assert saved["summary"]["primary"]["seeds"] == []


def _stand_in_worker(job):
    # A stand-in for the worker (training runs cannot fit a fast test): what resuming decides is
    # which jobs run and what the report keeps, not how a run trains. It runs in a worker
    # process, so it leaves a file per job in the bench's root to say it ran.
    (Path(job["root"]) / "ran").mkdir(parents=True, exist_ok=True)
    (Path(job["root"]) / "ran" / job["name"]).touch()
    return _stand_in_record(job, iterations=1, env_steps=10, train_success=0.1 * (1 + job["seed"]))


def _ran(root: Path) -> list[str]:
    return sorted(p.name for p in (root / "ran").iterdir()) if (root / "ran").exists() else []


def test_a_resumed_bench_keeps_the_finished_runs_and_trains_only_the_new_ones(tmp_path, monkeypatch):
    import empo2.bench.runner as bench

    monkeypatch.setattr(bench, "_train_and_evaluate", _stand_in_worker)
    monkeypatch.setattr("empo2.training.trainer.resolve_model", lambda model: "/cache/policy-abc")
    out = tmp_path / "out"
    first = run_bench([0, 1], out, tmp_path / "runs1", workers=1, arms=["EMPO²", "GRPO"])
    assert first["complete"] and len(_ran(tmp_path / "runs1")) == 5
    assert first["protocol"]["policy"] == "policy-abc"
    first_seconds = json.loads((out / "results.json").read_text())["seconds"]
    second = run_bench(
        [0, 1], out, tmp_path / "runs2", workers=1, arms=["EMPO²", "GRPO", "GRPO + novelty"], resume=True
    )
    assert _ran(tmp_path / "runs2") == ["grpo-plus-novelty-seed0", "grpo-plus-novelty-seed1"]
    assert second["complete"] and second["finished_runs"] == second["planned_runs"] == 7
    kept = {r["name"]: r for r in first["runs"]}
    assert all(kept[r["name"]] == r for r in second["runs"] if r["name"] in kept)
    assert second["earlier"] == [{"root": str(tmp_path / "runs1"), "seconds": first_seconds, "runs": 5}]
    assert [c["method"] for c in second["summary"]["arms_vs_grpo"]] == ["GRPO + novelty"]
    assert "in 2 invocations" in (out / "results.md").read_text()
    saved = json.loads((out / "results.json").read_text())
    assert saved["protocol"]["arms"] == ["EMPO²", "GRPO", "GRPO + novelty"]

    def no_pool(*args, **kwargs):
        raise AssertionError("a bench with nothing left to train started worker processes")

    monkeypatch.setattr(bench, "ProcessPoolExecutor", no_pool)
    third = run_bench([0, 1], out, tmp_path / "runs3", workers=1, arms=["EMPO²", "GRPO"], resume=True)
    assert _ran(tmp_path / "runs3") == [] and third["complete"]  # nothing left to train


def test_every_run_records_the_weights_it_started_from_and_a_resume_on_other_weights_says_so(
    tmp_path, monkeypatch, capsys
):
    import hashlib

    import empo2.bench.runner as bench

    policy = tmp_path / "policy-abc"
    policy.mkdir()
    monkeypatch.setattr(bench, "_train_and_evaluate", _stand_in_worker)
    monkeypatch.setattr("empo2.training.trainer.resolve_model", lambda model: str(policy))
    monkeypatch.setattr(bench, "cpu_model", lambda: "CPU one")
    out = tmp_path / "out"
    (policy / "model.safetensors").write_bytes(b"the first build")
    first = run_bench([0], out, tmp_path / "runs1", workers=1, arms=["EMPO²", "GRPO"])
    sha = hashlib.sha256(b"model.safetensors\0the first build").hexdigest()
    assert {(r["policy_sha256"], r["cpu"]) for r in first["runs"]} == {(sha, "CPU one")}
    assert "other weights" not in capsys.readouterr().err
    # The same recipe built on another machine: other bytes under the same folder name.
    (policy / "model.safetensors").write_bytes(b"the second build")
    monkeypatch.setattr(bench, "cpu_model", lambda: "CPU two")
    second = run_bench([0, 1], out, tmp_path / "runs2", workers=1, arms=["EMPO²", "GRPO"], resume=True)
    assert "seeds 0 started from other weights than this machine's policy-abc" in capsys.readouterr().err
    other = hashlib.sha256(b"model.safetensors\0the second build").hexdigest()
    assert {r["seed"]: r["policy_sha256"] for r in second["runs"] if r["method"] == "GRPO"} == {0: sha, 1: other}
    assert (
        f"Warm start's weights (sha256): `{sha[:12]}` on CPU one (seeds 0); `{other[:12]}` on CPU two (seeds 1)."
    ) in (out / "results.md").read_text()


def test_a_policy_folder_without_weight_files_has_no_weights_hash(tmp_path):
    from empo2.bench.provenance import weights_sha256

    assert weights_sha256(tmp_path) is None and weights_sha256(tmp_path / "missing") is None
    (tmp_path / "b.bin").write_bytes(b"2")
    (tmp_path / "a.safetensors").write_bytes(b"1")
    both = weights_sha256(tmp_path)
    (tmp_path / "b.bin").write_bytes(b"3")
    assert both is not None and weights_sha256(tmp_path) != both


@pytest.mark.parametrize(
    "change, message",
    [
        ({"eval_episodes": 60}, "was made with eval_episodes = 240"),
        ({"overrides": ["max_env_steps=100"]}, "was made with overrides = []"),
    ],
)
def test_a_bench_resumes_only_under_the_same_protocol_and_leaves_the_report_as_it_was(
    tmp_path, monkeypatch, change, message
):
    import empo2.bench.runner as bench

    monkeypatch.setattr(bench, "_train_and_evaluate", _stand_in_worker)
    monkeypatch.setattr("empo2.training.trainer.resolve_model", lambda model: "/cache/policy-abc")
    out = tmp_path / "out"
    run_bench([0], out, tmp_path / "runs", workers=1, arms=["EMPO²", "GRPO"])
    before = (out / "results.json").read_bytes()
    kwargs = dict(dict(eval_episodes=240, overrides=[]), **change)
    with pytest.raises(bench.ResumeError, match=re.escape(message)):
        run_bench([0], out, tmp_path / "runs", workers=1, arms=["EMPO²", "GRPO"], resume=True, **kwargs)
    assert (out / "results.json").read_bytes() == before


def test_the_command_line_refuses_to_resume_a_damaged_report_in_one_sentence(tmp_path, tiny_policy):
    import os
    import subprocess
    import sys

    out = tmp_path / "out"
    out.mkdir()
    (out / "results.json").write_text('{"protocol": ')  # cut off mid-write by an older tool
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "empo2.cli",
            "bench",
            "--seeds",
            "0",
            "--resume",
            "--out",
            str(out),
            f"policy.model={tiny_policy}",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        env=dict(os.environ, EMPO2_NO_PROGRESS="1"),
    )
    assert result.returncode == 2, result.stderr
    assert "is not a bench report that can be resumed" in result.stderr
    assert "Traceback" not in result.stderr and result.stderr.strip().count("\n") == 0
    assert (out / "results.json").read_text() == '{"protocol": '


class _DieAfterFirstIteration(TrainerHooks):
    """Stands for the bench being stopped mid-run: the first iteration's metrics are its last."""

    def on_metrics(self, record: dict) -> None:
        raise KeyboardInterrupt


@pytest.mark.slow
def test_a_resumed_bench_continues_a_run_it_left_half_trained_and_refuses_a_foreign_one(tmp_path, tiny_policy):
    import empo2.bench.runner as bench
    from empo2.config import load_config
    from empo2.run_folder.folder import RunFolder
    from empo2.training.trainer import Trainer

    overrides = [
        f"policy.model={tiny_policy}",
        "max_env_steps=40",
        "algo.batch_tasks=2",
        "algo.group_size=2",
        "env.max_steps=5",
        "policy.max_action_tokens=6",
    ]

    def job(root: Path) -> dict:
        jobs = bench_jobs([0], [], bench.PRESET, overrides, root, 4, 0, {"GRPO": ARMS["GRPO"]})
        return next(j for j in jobs if j["train"])

    straight = bench._train_and_evaluate(job(tmp_path / "straight"))
    half = job(tmp_path / "half")
    config = load_config(half["preset"], half["overrides"] + ["seed=0"])
    config.root, config.name = half["root"], half["name"]
    folder = RunFolder.create(Path(config.root), config.name, config.to_dict())
    with pytest.raises(KeyboardInterrupt):
        Trainer(config, folder, hooks=_DieAfterFirstIteration()).run()
    assert len(folder.metrics()) == 1 < straight["iterations"]

    first_iteration = folder.metrics()[0]["time/total"]
    resumed = bench._train_and_evaluate(half)
    # The training time spans both invocations: the iteration before the kill counts too.
    assert resumed["train_seconds"] == pytest.approx(sum(m["time/total"] for m in folder.metrics()), abs=0.1)
    assert resumed["train_seconds"] > first_iteration > 0
    for run in (resumed, straight):
        run.pop("seconds"), run.pop("train_seconds")
    assert resumed == straight
    assert _metrics(folder.path) == _metrics(tmp_path / "straight" / half["name"])

    (folder.path / "config.json").write_text(json.dumps(dict(folder.config(), seed=7)))
    with pytest.raises(bench.ResumeError, match="holds a run with another config"):
        bench._train_and_evaluate(half)


@pytest.mark.parametrize(
    "primary, marked, unmarked",
    [
        ("held_out_success", "held-out success (primary)", "train success |"),
        ("train_success", "train success (primary)", "held-out success |"),
    ],
)
def test_the_results_table_marks_the_protocols_primary_metric(primary, marked, unmarked):
    row = {
        "method": "EMPO²",
        "seeds": 1,
        "env_steps": 6000,
        "train_success": 0.5,
        "train_success_sd": 0.0,
        "held_out_success": 0.25,
        "held_out_success_sd": 0.0,
        "auc": 0.4,
        "ood_first": None,
        "ood_last": None,
    }
    report = {
        "protocol": {
            "preset": "builtin-bench",
            "overrides": [],
            "seeds": [1],
            "ablation_seeds": [],
            "env_step_budget": 6000,
            "eval_episodes": 240,
            "eval_temperature": 0.4,
            "primary_metric": primary,
        },
        "seconds": 60,
        "table": [row],
        "summary": summarise([], primary),
    }
    header = markdown(report).splitlines()[2]
    assert marked in header and unmarked in header
