"""Rerun the off-policy update on a branch of a run, or dry-run it; compare before and after.

    empo2-host rerun RUN [--checkpoint C] [--variations power-device/3,...] [--episodes N]
                         [--iterations K] [--dry-run]

A person edits tips, then asks what the policy would learn from them. The rerun:
1. branches the run at checkpoint C (rerun/branch.py; the parent is never written), whose memory
   is the parent's as it now stands: the checkpoint's, with people's later edits re-applied;
2. evaluates the chosen variations memory-free at C (fixed seeds);
3. for K iterations, through the trainer's own steps (`Trainer.play`, `Trainer.update`,
   `Trainer.record`, `Trainer.checkpoint`): rolls out N episodes per variation with tips (one
   GRPO group per variation), then applies the off-policy update of the training loss (tips
   stripped from the numerator, Table 3 ratios, low-probability mask, dual clip);
4. evaluates again with the same seeds, and scores the first iteration's tip-guided actions
   without tips at C and after (the quantity the update raises).
Everything lands in the branch: `rerun.json` (settings, progress, the comparison), its metrics,
trajectories and checkpoints. A rerun that is stopped or killed resumes from the branch's last
checkpoint when it is run again on the branch.

The dry run plays the same rollouts from a scratch branch (a temporary folder) and computes the
loss without an optimizer step; the weights stay bit-identical and the one thing written is a
dry-run record in the run's `dry-runs/` folder.

Where a rerun differs from a training iteration (each deliberate):
1. The policy writes no tips: the memory stays the one the person edited, so the rerun measures
   that edit. (Novelty rewards and everything else are the training loop's.)
2. Rollouts are always memory mode and the update always off-policy (p = q = 1), on the chosen
   variations rather than sampled tasks. With the run's algo.memory_contrast=half the second
   half of each group plays without tips, as in training (trainer.py, choice 7), and its
   samples are on-policy; the run's algo.off_policy_old_logprob sets the tip half's ratio.
3. `kl_to_checkpoint` is the token mean of the configured KL estimator (algo.kl_kind) between
   the rerun's weights and C's, on the first iteration's tip-guided actions without tips.
   In a dry run it is 0 by construction (the weights are C's); it is reported all the same.
"""

from __future__ import annotations

import json
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np
import torch

from ..algo.losses import kl_penalty
from ..atomic import atomic_write_json
from ..config import load_config
from ..envs.registry import make_env
from ..memory.layout import EVENTS_FILE
from ..run_folder.folder import RunFolder, iteration_name
from ..trackers import mirrored
from ..training.rollout import MEMORY_FREE, Episode, RolloutSettings, StepRecord, roll_out
from ..training.run_control import RunControl, TrainerHooks
from ..training.trainer import Trainer
from ..training.update import OFF_POLICY, dry_run_loss, tip_guided_logprobs
from .branch import (
    RERUN_FILE,
    BranchError,
    checkpoint_marker,
    create_branch,
    not_training,
    parent_record,
    person_edits_after,
    person_edits_in,
)

DRY_RUNS = "dry-runs"
UPDATE_MODE = OFF_POLICY
FORMAT = 1


class RerunError(BranchError):
    """A rerun that cannot start (unknown variation, nothing edited, ...); one sentence."""


@dataclass
class RerunSettings:
    """What a rerun does; the CLI flags and the protocol's params map onto these fields."""

    checkpoint: int | None = None
    """Iteration of the run's checkpoint to branch from; None: its latest."""
    variations: list[str] = field(default_factory=list)
    """Variation keys "task/variation"; empty: those whose tips people edited since C."""
    episodes: int = 8
    """N: rollouts per variation and iteration (one GRPO group per variation)."""
    iterations: int = 1
    """K: rollout-and-update iterations."""
    eval_episodes: int = 8
    """Memory-free evaluation episodes per variation, before and after (same seeds)."""
    held_out: int = 0
    """Also evaluate this many held-out variations of each chosen variation's task."""
    seed: int = 0
    """Seed of the before/after evaluation (the rollouts draw from per-episode generators of the run seed)."""
    dry_run: bool = False
    """Roll out and compute the loss, no optimizer step; writes only a dry-run record."""

    def check(self) -> None:
        for name in ("episodes", "iterations", "eval_episodes"):
            if getattr(self, name) < 1:
                raise RerunError(f"{name.replace('_', '-')} must be at least 1")
        if self.held_out < 0:
            raise RerunError("held-out must be 0 or more")


def rerun_record(folder: RunFolder) -> dict | None:
    try:
        return json.loads((folder.path / RERUN_FILE).read_text())
    except FileNotFoundError:
        return None


def rerun(
    run: RunFolder,
    settings: RerunSettings,
    hooks: TrainerHooks | None = None,
    control: RunControl | None = None,
    embedder=None,
    branch_name: str | None = None,
    on_trainer=None,
) -> dict:
    """Reruns (or dry-runs) the off-policy update; returns the result that the CLI prints.

    `run` may be a branch whose rerun did not finish: then that rerun continues, with the
    settings it was started with. `on_trainer(trainer)` is called once the trainer exists (the
    host routes the branch's memory requests to it); the trainer's memory then stays open for
    the caller to take over.
    """
    settings.check()
    hooks, control = hooks or TrainerHooks(), control or RunControl()
    record = rerun_record(run)
    if record is not None and record.get("status") != "finished" and not settings.dry_run:
        return _continue(run, record, settings, hooks, control, embedder, on_trainer)
    if settings.dry_run:
        with tempfile.TemporaryDirectory(prefix="empo2-dry-run-") as scratch:
            branch = prepare_branch(run, settings, "dry-run", root=Path(scratch))
            return _execute(branch, run, settings, hooks, control, embedder, None)
    branch = prepare_branch(run, settings, branch_name)
    return _execute(branch, run, settings, hooks, control, embedder, on_trainer)


def prepare_branch(
    run: RunFolder, settings: RerunSettings, branch_name: str | None = None, root: Path | None = None
) -> RunFolder:
    """Checks the request against the run, then creates the branch, born with its rerun.json
    (status running): a rerun of it continues from there. Fast: no model is loaded."""
    settings.check()
    checkpoint, marker = checkpoint_marker(run, settings.checkpoint)
    edits = person_edits_after(run.memory_path / EVENTS_FILE, marker)
    settings.variations = chosen_variations(
        load_config(run.config()), settings.variations, edits, checkpoint, run.run_id
    )
    settings.checkpoint = checkpoint
    pending = {
        RERUN_FILE: {
            "format": FORMAT,
            "status": "running",
            "settings": asdict(settings),
            "variations": settings.variations,
            "updates": [],
        }
    }
    return create_branch(run, settings.checkpoint, name=branch_name, root=root, records=pending)


def _continue(branch, record, settings, hooks, control, embedder, on_trainer) -> dict:
    stored = RerunSettings(**record["settings"])
    for name in ("checkpoint", "variations", "episodes", "iterations"):
        given = getattr(settings, name)
        if given not in (None, [], getattr(RerunSettings(), name)) and given != getattr(stored, name):
            raise RerunError(
                f"branch {branch.run_id} has an unfinished rerun with "
                f"{name}={getattr(stored, name)}; run it without options to finish it"
            )
    parent = RunFolder(Path(parent_record(branch)["path"]))
    return _execute(branch, parent, stored, hooks, control, embedder, on_trainer)


def _execute(
    branch: RunFolder, parent: RunFolder, settings: RerunSettings, hooks, control, embedder, on_trainer
) -> dict:
    origin = parent_record(branch)
    config = load_config(branch.config())
    # A dry run's scratch branch is no run a tracker should show.
    with branch.writer_lock(), mirrored(branch, [] if settings.dry_run else config.report_to):
        trainer = Trainer(config, branch, hooks=hooks, control=control, embedder=embedder)
        if on_trainer is not None:
            on_trainer(trainer)
        try:
            return _steps(trainer, branch, parent, origin, settings)
        finally:
            branch.write_progress(None)  # the trainer's progress.json: nothing in progress now
            if on_trainer is None and trainer.memory is not None:
                trainer.memory.close()  # the branch's log: free for the next opener
            trainer.close()


def _steps(trainer: Trainer, branch: RunFolder, parent: RunFolder, origin: dict, settings: RerunSettings) -> dict:
    trainer.start(resume=True)
    trainer.hooks.on_state("running", trainer.iteration)  # the memory is open: say so
    start = int(origin["checkpoint"])
    record = rerun_record(branch) or {}
    keys = settings.variations
    pairs = [_pair(k) for k in keys]
    record = {
        **record,
        "format": FORMAT,
        "parent": origin["run"],
        "branch": branch.run_id,
        "checkpoint": start,
        "settings": asdict(settings),
        "variations": keys,
        # Every person's edit in the memory the rerun uses, made before the checkpoint
        # or after it (parent.json's tip_edits has only the later ones).
        "tips": [e for e in person_edits_in(branch.memory_path / EVENTS_FILE) if e["variation_key"] in keys],
        "status": "running",
        "updates": record.get("updates", []),
    }
    if not settings.dry_run:
        _save(branch, record)
        branch.set_state("running", iteration=trainer.iteration)
    eval_pairs = pairs + _held_out(trainer, pairs, settings.held_out)
    if "before" not in record:
        trainer.hooks.on_progress(start, "evaluation", 0, 1)
        record["before"] = evaluate_pairs(trainer, eval_pairs, settings)
        if not settings.dry_run:
            _save(branch, record)
    pad = trainer.tokenizer.pad_token_id
    while trainer.iteration < start + settings.iterations:
        if trainer.control.wait_if_paused():
            record["status"] = "stopped"
            _save(branch, record)
            branch.set_state("stopped", iteration=trainer.iteration)
            return _result(branch, record)
        iteration = trainer.iteration + 1
        episodes, after, timings, split = trainer.play(
            iteration, pairs, memory_mode=True, group_size=settings.episodes, tips=False
        )
        if iteration == start + 1:
            record["probe"] = {
                "episodes": _probe_meta(episodes),
                "before": tip_guided_logprobs(trainer.model, episodes, pad),
            }
        if settings.dry_run:
            return _dry_run(trainer, parent, record, episodes, settings)
        clock = time.perf_counter()
        trainer.hooks.on_progress(iteration, "update", 0, 1)
        stats = trainer.update(episodes, UPDATE_MODE)
        timings["update"] = time.perf_counter() - clock
        trainer.record(iteration, episodes, after, True, UPDATE_MODE, stats, {}, timings, split)
        trainer.checkpoint()
        record["updates"].append({"iteration": iteration, **stats})
        _save(branch, record)
    if "after" not in record:
        trainer.hooks.on_progress(trainer.iteration, "evaluation", 0, 1)
        record["after"] = evaluate_pairs(trainer, eval_pairs, settings)
        probe = _probe_episodes(branch, start + 1)
        record["probe"]["after"] = tip_guided_logprobs(trainer.model, probe, pad)
        record["kl_to_checkpoint"] = _kl(record["probe"], trainer.config.algo.kl_kind)
    record["status"] = "finished"
    _save(branch, record)
    # The branch is done: what it was made for ran to the end (a stopped rerun stays "stopped",
    # and continues when rerun on the branch).
    branch.set_state("finished", iteration=trainer.iteration)
    return _result(branch, record)


def _dry_run(trainer, parent: RunFolder, record: dict, episodes, settings) -> dict:
    """The loss on the first iteration's rollouts, no step; one record in the run's dry-runs/."""
    algo = trainer.config.algo
    report = dry_run_loss(
        trainer.model, episodes, UPDATE_MODE, algo, trainer.tokenizer.pad_token_id, micro_batch=algo.micro_batch
    )
    record["probe"]["after"] = record["probe"]["before"]  # no step: the same weights
    ids = [ep.id for ep in episodes]
    result = {
        "format": FORMAT,
        "dry_run": True,
        "run": parent.run_id,
        "checkpoint": record["checkpoint"],
        "variations": record["variations"],
        "settings": record["settings"],
        "tips": record["tips"],
        "loss": report["stats"].get("loss"),
        "stats": report["stats"],
        "masked_fraction": report["stats"].get("masked_fraction"),
        "kl_to_checkpoint": _kl(record["probe"], algo.kl_kind),
        "ratios": [{"episode": ids[e], "ratios": r} for e, r in zip(report["samples"], report["ratios"])],
        "episodes": _episode_rows(record, with_after=False),
        "before": record["before"],
        "created": time.time(),
    }
    path = parent.path / DRY_RUNS / f"dry-run-{time.strftime('%Y%m%d-%H%M%S')}-{time.time_ns() % 10**6:06d}.json"
    with not_training(parent):
        atomic_write_json(path, result)
    return {**result, "record": str(path)}


# -- choosing and evaluating -------------------------------------------------------------------


def chosen_variations(config, keys: list[str], edits: list[dict], checkpoint: int, run_id: str) -> list[str]:
    """The variations to rerun: `keys`, or those whose tips people edited since the checkpoint;
    RerunError for an unknown one or when there is nothing to choose."""
    keys = list(keys) or list(dict.fromkeys(e["variation_key"] for e in edits if e.get("variation_key")))
    if not keys:
        raise RerunError(
            f"no tip was edited since checkpoint {checkpoint} of run {run_id}; name the variations to rerun"
        )
    env = make_env(config.env)
    try:
        for key in keys:
            task, variation = _pair(key)
            if task not in env.tasks():
                raise RerunError(f"unknown variation {key}: no task {task} (tasks: {', '.join(env.tasks())})")
            known = set(env.variations(task, "train")) | set(env.variations(task, "test"))
            if variation not in known:
                raise RerunError(f"unknown variation {key}: task {task} has variations {min(known)} to {max(known)}")
    finally:
        if hasattr(env, "close"):
            env.close()
    return list(dict.fromkeys(keys))


def _pair(key: str) -> tuple[str, int]:
    task, _, variation = str(key).rpartition("/")
    if not task or not variation.lstrip("-").isdigit():
        raise RerunError(f"unknown variation {key}: write it as task/number, e.g. power-device/3")
    return task, int(variation)


def _held_out(trainer: Trainer, pairs, count: int) -> list[tuple[str, int]]:
    extra = []
    for task in dict.fromkeys(t for t, _ in pairs):
        extra += [(task, v) for v in trainer.env.variations(task, "test")[:count] if (task, v) not in pairs]
    return extra


def evaluate_pairs(trainer: Trainer, pairs: list[tuple[str, int]], settings: RerunSettings) -> dict:
    """Memory-free success of each variation, eval temperature, seeds fixed by `settings.seed`:
    the same episodes and draws before and after, only the weights differ."""
    episodes = [
        Episode(id=f"eval-{k}", task=t, variation=v, group=k, rollout_mode=MEMORY_FREE)
        for k, (t, v) in enumerate(pairs * settings.eval_episodes)
    ]
    generator = torch.Generator().manual_seed(settings.seed)
    roll_out(
        trainer.envs.take(len(episodes)),
        episodes,
        trainer.model,
        trainer.tokenizer,
        RolloutSettings.from_config(trainer.config, trainer.env, train=False),
        generator,
        None,
    )
    out = {}
    for t, v in pairs:
        mine = [ep for ep in episodes if (ep.task, ep.variation) == (t, v)]
        out[f"{t}/{v}"] = {
            "success": float(np.mean([ep.success for ep in mine])),
            "score": float(np.mean([ep.final_score for ep in mine])),
            "episodes": len(mine),
        }
    return out


# -- the probe: the first iteration's tip-guided actions ---------------------------------------


def _probe_meta(episodes) -> list[dict]:
    return [
        {"id": ep.id, "variation": ep.variation_key, "success": ep.success, "return": ep.final_score} for ep in episodes
    ]


def _probe_episodes(branch: RunFolder, iteration: int) -> list[Episode]:
    """The probe's episodes, rebuilt from the branch's trajectory file (a resumed rerun no
    longer has them in memory); only what scoring needs."""
    episodes = []
    for rec in branch.trajectories(iteration):
        ep = Episode(
            id=rec["id"],
            task=rec["task"],
            variation=rec["variation"],
            group=rec["group"],
            rollout_mode=rec["rollout_mode"],
        )
        ep.steps = [
            StepRecord(
                observation="",
                user_text="",
                tips=s["tips"],
                tip_ids=s["tip_ids"],
                prompt_ids=s["prompt_ids"],
                prompt_ids_no_tips=s["prompt_ids_no_tips"],
                action="",
                executed_action="",
                action_ids=s["action_ids"],
                behaviour_logprobs=s["behaviour_logprobs"],
            )
            for s in rec["steps"]
        ]
        episodes.append(ep)
    return episodes


def _kl(probe: dict, kind: str) -> float | None:
    before = [x for row in probe["before"] for x in row["token_logprobs"]]
    after = [x for row in probe["after"] for x in row["token_logprobs"]]
    if not before or len(before) != len(after):
        return None
    return float(kl_penalty(torch.tensor(after), torch.tensor(before), kind).mean())


def _episode_rows(record: dict, with_after: bool = True) -> list[dict]:
    probe = record.get("probe") or {}
    rows = []
    for k, meta in enumerate(probe.get("episodes", [])):
        before = probe["before"][k]
        row = {
            **meta,
            "tip_guided_steps": before["steps"],
            "tokens": before["tokens"],
            "logprob_before": before["logprob"] if before["tokens"] else None,
        }
        if with_after and probe.get("after"):
            after = probe["after"][k]
            row["logprob_after"] = after["logprob"] if after["tokens"] else None
        rows.append(row)
    return rows


def _save(branch: RunFolder, record: dict) -> None:
    record["updated"] = time.time()
    atomic_write_json(branch.path / RERUN_FILE, record)


def _result(branch: RunFolder, record: dict) -> dict:
    """The JSON the CLI prints and `update.rerun` returns: the comparison, no token arrays."""
    variations = []
    for key, before in record.get("before", {}).items():
        after = record.get("after", {}).get(key)
        variations.append(
            {
                "variation": key,
                "chosen": key in record["variations"],
                "before": before["success"],
                "after": after["success"] if after else None,
                "score_before": before["score"],
                "score_after": after["score"] if after else None,
            }
        )
    return {
        "format": FORMAT,
        "dry_run": False,
        "status": record["status"],
        "branch": branch.run_id,
        "path": str(branch.path),
        "parent": record["parent"],
        "checkpoint": record["checkpoint"],
        "iteration": int(branch.state().get("iteration", 0)),
        "variations": record["variations"],
        "settings": record["settings"],
        "comparison": variations,
        "episodes": _episode_rows(record),
        "tips": record["tips"],
        "updates": record["updates"],
        "kl_to_checkpoint": record.get("kl_to_checkpoint"),
    }


def comparison(branch: RunFolder) -> dict:
    """The saved result of a branch's rerun (for `update.compare` and the comparison view)."""
    record = rerun_record(branch)
    if record is None:
        raise RerunError(f"run {branch.run_id} has no rerun to compare")
    return _result(branch, record)


__all__ = [
    "RerunSettings",
    "RerunError",
    "rerun",
    "comparison",
    "evaluate_pairs",
    "rerun_record",
    "RERUN_FILE",
    "DRY_RUNS",
    "iteration_name",
]
