"""From a debug launch (which policy, which task, which mode) to a ready DebugSession.

The policy is a run's checkpoint (`checkpoints/iter-N/model`, or the run's configured model for
a checkpoint without weights, iteration 0) or any policy folder. It is loaded as its own copy,
read-only: a debug session never touches a training run's live weights, optimizer or run
folder, which is why a host serves debug sessions while it trains (docs/debugging.md).
The environment and the rollout settings come from the run's config (or the `builtin` preset
for a bare policy folder); the novelty archive from the checkpoint when it has one.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from pathlib import Path

from ..config import TrainConfig, load_config
from ..modes import MEMORY, MEMORY_FREE
from ..run_folder.folder import RunFolder, iteration_name
from .session import DebugSession, SessionSpec

MODES = (MEMORY_FREE, MEMORY)  # the order a person is offered them


class LaunchError(Exception):
    """A launch that cannot start; `kind` names the protocol error, the message is one sentence."""

    def __init__(self, kind: str, message: str):
        super().__init__(message)
        self.kind = kind


@dataclass
class Launch:
    """A launch after the server resolved its names to folders."""

    task: str | None
    variation: int | None
    seed: int
    mode: str
    temperature: float | None
    device: str
    run: RunFolder | None = None
    checkpoint: int | None = None  # None: the run's newest checkpoint
    policy_path: str | None = None  # a policy folder or "builtin", instead of a run's checkpoint
    record: dict | None = None  # the recorded episode to replay
    record_run: RunFolder | None = None


def run_config(folder: RunFolder | None) -> TrainConfig:
    if folder is None:
        return load_config("builtin")
    try:
        return load_config(folder.config())
    except Exception as err:  # ConfigError, OSError, ValueError: all one sentence
        raise LaunchError("ConfigInvalid", f"the run's config.json cannot be used ({err}).") from None


def checkpoint_dir(folder: RunFolder, iteration: int | None) -> tuple[int, Path]:
    available = folder.checkpoint_iterations()
    if not available:
        raise LaunchError("ConfigInvalid", f"run '{folder.run_id}' has no checkpoint yet.")
    chosen = available[-1] if iteration is None else iteration
    if chosen not in available:
        raise LaunchError(
            "ConfigInvalid",
            f"run '{folder.run_id}' has no checkpoint of iteration {chosen} (it has {', '.join(map(str, available))}).",
        )
    return chosen, folder.checkpoints_path / iteration_name(chosen)


def played_by(launch: Launch) -> int | None:
    """The checkpoint of the episode's run whose weights played the replayed episode: iteration i
    was played by the policy saved after iteration i-1. None for a launch that replays nothing, or
    an episode that no training iteration played."""
    record = launch.record
    if record is None or launch.record_run is None or not record.get("iteration"):
        return None
    return record["iteration"] - 1


def producing_checkpoint(launch: Launch) -> int | None:
    """`played_by` when the launch's run is the episode's and still keeps it; else None (the
    newest, and `replay_note` says so)."""
    wanted = played_by(launch)
    if wanted is None or not _same_run(launch):
        return None
    return wanted if wanted in launch.run.checkpoint_iterations() else None


def replay_note(
    launch: Launch, config: TrainConfig, iteration: int | None, policy: str, max_error: float
) -> str | None:
    """What a person is told when the replay's weights are not the ones that played the episode:
    which played it, which replay it, why, and what comes nearer if anything does. None when they
    are the same. Re-scored log π then differ from the recorded ones by more than float noise, which a
    person must know before reading any log-prob of the session (max_error says how much)."""
    wanted = played_by(launch)
    if wanted is None or (_same_run(launch) and iteration == wanted):
        return None
    differ = f"its log π differ from the recorded ones (max |Δ log p| {_exponential(max_error)})"
    if not _same_run(launch):
        weights = policy if launch.policy_path is not None else f"checkpoint {iteration} of run '{launch.run.run_id}'"
        return (
            f"Checkpoint {wanted} of run '{launch.record_run.run_id}' played this episode; "
            f"{weights} replays it, so {differ}."
        )
    if launch.checkpoint is not None:
        return f"Checkpoint {wanted} played this episode; checkpoint {iteration}, as launched, replays it, so {differ}."
    if wanted % config.checkpoint_every == 0:  # saved, then deleted for newer ones
        why = f"is no longer kept (the run keeps its newest {config.keep_checkpoints}: keep_checkpoints)"
        setting = "A run started with a larger keep_checkpoints keeps older ones."
    else:
        why = f"was never saved (the run saves one every {config.checkpoint_every} iterations: checkpoint_every)"
        setting = "A run started with checkpoint_every 1 saves every one."
    # Kept checkpoints are the newest ones: the oldest kept is the nearest to the one gone.
    nearest = min((k for k in launch.run.checkpoint_iterations() if k > wanted), default=iteration)
    closer = (
        f' Checkpoint {nearest} is the nearest one kept (launch attribute "checkpoint").'
        if nearest != iteration
        else ""
    )
    return (
        f"Checkpoint {wanted}, which played this episode, {why}, so checkpoint {iteration} "
        f"replays it and {differ}.{closer} {setting}"
    )


def _same_run(launch: Launch) -> bool:
    """The launch replays with a checkpoint of the episode's own run (not a policy folder)."""
    return (
        launch.policy_path is None
        and launch.run is not None
        and launch.record_run is not None
        and launch.run.path == launch.record_run.path
    )


def _exponential(x: float) -> str:
    """x as the debug console writes numbers (JavaScript's toExponential(1)): 7.8e-1, 3.5e-6."""
    mantissa, exponent = f"{x:.1e}".split("e")
    return f"{mantissa}e{int(exponent):+d}"


def open_session(launch: Launch, embedder) -> tuple[DebugSession, dict]:
    """The session and what the client is told about it (blocking: loads the model)."""
    import torch

    from ..algo.intrinsic import make_intrinsic_reward
    from ..envs.registry import make_env
    from ..policy.model import PolicyLoadError, load_policy
    from ..training.rollout import RolloutSettings
    from ..training.trainer import resolve_device, resolve_model
    from .replay import score_recording, training_advantage

    config = run_config(launch.run or launch.record_run)
    record = launch.record
    task = record["task"] if record else launch.task
    variation = record["variation"] if record else launch.variation
    seed = record.get("group", 0) if record else launch.seed
    mode = record.get("rollout_mode", launch.mode) if record else launch.mode
    if mode not in MODES:
        raise LaunchError("InvalidParams", f"mode must be one of {', '.join(MODES)}.")

    env = make_env(config.env)
    if task not in env.tasks():
        raise LaunchError("ConfigInvalid", f"{config.env.name} has no task '{task}' (tasks: {', '.join(env.tasks())}).")
    if variation not in env.variations(task, "all"):
        raise LaunchError("ConfigInvalid", f"task '{task}' has no variation {variation}.")

    iteration, ckpt = None, None
    if launch.policy_path is not None:
        model_path = resolve_model(launch.policy_path)
    else:
        iteration, ckpt = checkpoint_dir(
            launch.run, launch.checkpoint if launch.checkpoint is not None else producing_checkpoint(launch)
        )
        has_model = (ckpt / "model").is_dir()
        model_path = str(ckpt / "model") if has_model else resolve_model(config.policy.model)
    device = resolve_device(launch.device if launch.device != "auto" else config.policy.device)
    try:
        model, tokenizer = load_policy(model_path, device=str(device), dtype=config.policy.dtype)
    except PolicyLoadError as err:
        raise LaunchError("ConfigInvalid", str(err)) from None
    except torch.OutOfMemoryError:
        raise LaunchError(
            "ConfigInvalid",
            f"{device} has no room for the policy copy of a debug "
            "session (a run may be training there); launch it with device 'cpu'.",
        ) from None
    model.requires_grad_(False)

    algo = config.algo
    intrinsic = make_intrinsic_reward(
        algo.intrinsic, **({"threshold": algo.novelty_threshold} if algo.intrinsic == "paper" else {})
    )
    if ckpt is not None and (ckpt / "rng.pt").is_file():
        state = torch.load(ckpt / "rng.pt", weights_only=False).get("intrinsic")
        if state is not None:
            intrinsic.load_state_dict(copy.deepcopy(state))

    settings = RolloutSettings.from_config(config, env, train=True)
    if launch.temperature is not None:
        settings.temperature = launch.temperature
    scores, summary = None, None
    if record is not None:
        advantage = None
        if launch.record_run is not None and record.get("iteration"):
            advantage = training_advantage(record, list(launch.record_run.trajectories(record["iteration"])), config)
        scores, summary = score_recording(model, tokenizer, record, settings.temperature, config, advantage)
        summary.update(
            {
                "runId": launch.record_run.run_id if launch.record_run else None,
                "episodeId": record["id"],
                "playedBy": played_by(launch),
                "note": replay_note(launch, config, iteration, model_path, summary["maxLogprobError"]),
            }
        )
    spec = SessionSpec(
        task=task, variation=variation, seed=seed, mode=mode, settings=settings, record=record, replay_scores=scores
    )
    session = DebugSession(spec, env, model, tokenizer, intrinsic, embedder)
    if summary is not None:  # a reset that showed another first observation says so at once
        summary["observationMismatch"] = session.observation_mismatch
    info = {
        "task": task,
        "variation": variation,
        "seed": seed,
        "mode": mode,
        "temperature": settings.temperature,
        "policy": model_path,
        "checkpoint": iteration,
        "device": str(device),
        "description": session.episode.description,
        "maxActionTokens": settings.max_action_tokens,
        "maxSteps": config.env.max_steps,
        "replay": summary,
    }
    return session, info
