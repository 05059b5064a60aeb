"""The method table: every protocol method, once, with its params definition and handler.

The names and params definitions must match the schema's `ClientMessage` list exactly (a test
checks both directions); `initialize` is the one method allowed before `initialize`, `ping` and
`shutdown` the ones still answered while the host shuts down.
"""

from __future__ import annotations

from ..transport.dispatch import Method
from . import checkpoint, config, debug, env, host, memory, run, trajectory, update

METHODS: tuple[Method, ...] = (
    Method("initialize", "InitializeParams", host.initialize, before_initialize=True),
    Method("shutdown", "ShutdownParams", host.shutdown, while_shutting_down=True),
    Method("ping", "PingParams", host.ping, while_shutting_down=True),
    Method("run.start", "RunStartParams", run.start),
    Method("run.pause", "RunPauseParams", run.pause),
    Method("run.resume", "RunResumeParams", run.resume),
    Method("run.stop", "RunStopParams", run.stop),
    Method("run.list", "RunListParams", run.list_runs),
    Method("run.open", "RunOpenParams", run.open_run),
    Method("run.status", "RunStatusParams", run.status),
    Method("run.metrics", "RunMetricsParams", run.metrics),
    Method("trajectory.list", "TrajectoryListParams", trajectory.list_trajectories),
    Method("trajectory.get", "TrajectoryGetParams", trajectory.get_trajectory),
    Method("memory.list", "MemoryListParams", memory.list_tips),
    Method("memory.get", "MemoryGetParams", memory.get_tip),
    Method("memory.add", "MemoryAddParams", memory.add_tip),
    Method("memory.update", "MemoryUpdateParams", memory.update_tip),
    Method("memory.delete", "MemoryDeleteParams", memory.delete_tip),
    Method("memory.history", "MemoryHistoryParams", memory.history),
    Method("checkpoint.list", "CheckpointListParams", checkpoint.list_checkpoints),
    Method("log.tail", "LogTailParams", host.log_tail),
    Method("debug.start", "DebugStartParams", debug.start),
    Method("debug.step", "DebugStepParams", debug.step),
    Method("debug.force", "DebugForceParams", debug.force),
    Method("debug.replayTurn", "DebugReplayTurnParams", debug.replay_turn),
    Method("debug.state", "DebugStateParams", debug.state),
    Method("debug.stop", "DebugStopParams", debug.stop),
    Method("update.rerun", "UpdateRerunParams", update.rerun),
    Method("update.cancel", "UpdateCancelParams", update.cancel),
    Method("update.compare", "UpdateCompareParams", update.compare),
    Method("branch.adopt", "BranchAdoptParams", update.adopt),
    Method("branch.delete", "BranchDeleteParams", update.delete),
    Method("env.list", "EnvListParams", env.list_environments),
    Method("config.check", "ConfigCheckParams", config.check),
    Method("policy.list", "PolicyListParams", config.list_policies),
)

__all__ = ["METHODS"]
