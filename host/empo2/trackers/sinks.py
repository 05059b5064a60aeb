"""One class per tracker that `report_to` can name, each written against the tracker's own API.

A sink is driven by the mirror (mirror.py) from its thread, never by the trainer:
    sink.open(run)                   -> what to remember for a resume (e.g. the W&B run id)
    sink.metrics(record, iteration, env_steps)
    sink.texts(iteration, tips, episodes)   (tips: TIP_COLUMNS rows, episodes: EPISODE_COLUMNS rows)
    sink.flush(); sink.close()
Any exception a sink raises ends that sink for the rest of the run (the mirror logs one warning).
Each tracker package is imported in `open`, so a tracker that is not installed costs nothing but
that warning.
"""

from __future__ import annotations

import contextlib
import json
import math
import netrc
import os
import secrets
import sys
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlparse

TIP_COLUMNS = ["tip", "change", "variation", "author", "iteration", "score", "text"]
EPISODE_COLUMNS = ["episode", "task", "variation", "rollout_mode", "return", "success", "steps", "actions"]
TENSORBOARD_FOLDER = "tensorboard"  # <run>/tensorboard/: the event files
WANDB_FOLDER = "wandb"  # <run>/wandb/: W&B's own run folders (offline or online)
PROJECT = "empo2"  # W&B and trackio project unless WANDB_PROJECT / TRACKIO_PROJECT
ENV_STEPS_PREFIX = "by_env_steps/"  # TensorBoard: each scalar again, over environment steps


@dataclass
class TrackerRun:
    """What a tracker is told of the run it mirrors."""

    name: str  # the tracker run's display name (a branch's names its parent and checkpoint)
    folder: Path  # the run folder
    config: dict  # the run's config.json, the hyperparameters
    group: str  # the run a branch was made from (itself for a run of its own)
    remembered: dict = field(default_factory=dict)  # what `open` returned in an earlier process


def scalars(record: dict) -> dict[str, float]:
    """The numbers of a metrics line (booleans as 0/1); strings such as the modes are left out."""
    return {
        key: float(value) for key, value in record.items() if isinstance(value, (int, float)) and math.isfinite(value)
    }


def flat_config(config: dict, prefix: str = "") -> dict:
    """Dotted keys with scalar values (lists as JSON), as hyperparameter tables want them."""
    flat = {}
    for key, value in config.items():
        if isinstance(value, dict):
            flat.update(flat_config(value, f"{prefix}{key}."))
        else:
            flat[f"{prefix}{key}"] = value if isinstance(value, (int, float, str, bool)) else json.dumps(value)
    return flat


def _markdown_table(columns: list[str], rows: list[list]) -> str:
    def cell(value) -> str:
        return str(value).replace("|", "\\|").replace("\n", " ")

    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    return "\n".join(lines + ["| " + " | ".join(cell(v) for v in row) + " |" for row in rows])


class TensorBoardSink:
    """Event files in <run>/tensorboard/: every number at the iteration, and again under
    `by_env_steps/` at the environment steps; the config as hparams and text; tips and episodes
    as markdown tables in the Text tab."""

    name = "tensorboard"

    def open(self, run: TrackerRun) -> dict:
        from torch.utils.tensorboard import SummaryWriter  # needs the tensorboard package
        from torch.utils.tensorboard.summary import hparams

        self.writer = SummaryWriter(log_dir=str(run.folder / TENSORBOARD_FOLDER), flush_secs=3600)
        if not run.remembered.get("config_written"):
            flat = flat_config(run.config)
            exp, ssi, sei = hparams({k: v for k, v in flat.items()}, {"eval/memory_free/success": 0.0})
            for summary in (exp, ssi, sei):
                self.writer.file_writer.add_summary(summary)
            self.writer.add_text("config", "```json\n" + json.dumps(run.config, indent=2) + "\n```", 0)
        return {"config_written": True}

    def metrics(self, record: dict, iteration: int, env_steps: int) -> None:
        for key, value in scalars(record).items():
            self.writer.add_scalar(key, value, iteration)
            self.writer.add_scalar(ENV_STEPS_PREFIX + key, value, env_steps)

    def texts(self, iteration: int, tips: list[list], episodes: list[list]) -> None:
        if tips:
            self.writer.add_text("tips/changed", _markdown_table(TIP_COLUMNS, tips), iteration)
        if episodes:
            self.writer.add_text("episodes/sampled", _markdown_table(EPISODE_COLUMNS, episodes), iteration)

    def flush(self) -> None:
        self.writer.flush()

    def close(self) -> None:
        self.writer.close()


def wandb_account_configured() -> bool:
    """Whether the user gave W&B an account: WANDB_API_KEY, or `wandb login`'s netrc entry."""
    if os.environ.get("WANDB_API_KEY"):
        return True
    host = urlparse(os.environ.get("WANDB_BASE_URL") or "https://api.wandb.ai").hostname
    try:
        return netrc.netrc(os.environ.get("NETRC")).authenticators(host) is not None
    except (OSError, netrc.NetrcParseError):
        return False


class WandbSink:
    """A W&B run in <run>/wandb/, offline unless an account is configured (WANDB_MODE, when set,
    decides); the same run id on every resume. Metrics at step = iteration with env_steps among
    them (chosen as the x-axis in the W&B UI); tips and episodes as tables."""

    name = "wandb"

    def open(self, run: TrackerRun) -> dict:
        import wandb

        run_id = run.remembered.get("id") or secrets.token_hex(6)  # W&B ids: [a-z0-9]
        mode = os.environ.get("WANDB_MODE") or ("online" if wandb_account_configured() else "offline")
        folder = run.folder / WANDB_FOLDER
        folder.mkdir(exist_ok=True)
        self.run = wandb.init(
            project=os.environ.get("WANDB_PROJECT") or PROJECT,
            id=run_id,
            name=run.name,
            group=run.group,
            config=run.config,
            dir=str(run.folder),
            mode=mode,
            resume="allow",
            reinit="create_new",
            # Nothing sampled in the background: the mirror must not take the trainer's CPU.
            settings=wandb.Settings(
                x_disable_stats=True,
                x_disable_machine_info=True,
                console="off",
                save_code=False,
                disable_git=True,
                silent=True,
            ),
        )
        self.run.define_metric("env_steps")
        self.wandb = wandb
        return {"id": run_id, "mode": mode}

    def metrics(self, record: dict, iteration: int, env_steps: int) -> None:
        self.run.log({k: v for k, v in record.items() if k != "iteration"}, step=iteration)

    def texts(self, iteration: int, tips: list[list], episodes: list[list]) -> None:
        tables = {}
        if tips:
            tables["tips/changed"] = self.wandb.Table(columns=TIP_COLUMNS, data=tips)
        if episodes:
            tables["episodes/sampled"] = self.wandb.Table(columns=EPISODE_COLUMNS, data=episodes)
        if tables:
            self.run.log(tables, step=iteration)

    def flush(self) -> None:
        pass  # W&B's service process writes as it receives

    def close(self) -> None:
        self.run.finish()


class TrackioSink:
    """A trackio run in its local store (TRACKIO_DIR, default ~/.cache/huggingface/trackio),
    resumed by name; metrics at step = iteration, tips and episodes as tables."""

    name = "trackio"

    def open(self, run: TrackerRun) -> dict:
        import trackio

        self.trackio = trackio
        with contextlib.redirect_stdout(sys.stderr):  # trackio prints; the host's stdout is its own
            self.run = trackio.init(
                project=os.environ.get("TRACKIO_PROJECT") or PROJECT,
                name=run.name,
                group=run.group,
                config=flat_config(run.config),
                resume="allow",
                embed=False,
                auto_log_cpu=False,
                auto_log_gpu=False,
            )
        return {"name": run.name}

    def metrics(self, record: dict, iteration: int, env_steps: int) -> None:
        # trackio keeps 'time' for its own clock (it would rename ours, with a warning).
        self.run.log({k: v for k, v in scalars(record).items() if k != "time"}, step=iteration)

    def texts(self, iteration: int, tips: list[list], episodes: list[list]) -> None:
        tables = {}
        if tips:
            tables["tips/changed"] = self.trackio.Table(columns=TIP_COLUMNS, data=tips)
        if episodes:
            tables["episodes/sampled"] = self.trackio.Table(columns=EPISODE_COLUMNS, data=episodes)
        if tables:
            self.run.log(tables, step=iteration)

    def flush(self) -> None:
        pass

    def close(self) -> None:
        with contextlib.redirect_stdout(sys.stderr):
            self.run.finish()


SINKS = {sink.name: sink for sink in (TensorBoardSink, WandbSink, TrackioSink)}

__all__ = [
    "SINKS",
    "TrackerRun",
    "TIP_COLUMNS",
    "EPISODE_COLUMNS",
    "TENSORBOARD_FOLDER",
    "WANDB_FOLDER",
    "ENV_STEPS_PREFIX",
    "wandb_account_configured",
]
