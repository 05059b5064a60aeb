"""`update.*` and `branch.*`: rerun the off-policy update on a branch, dry-run it, compare,
adopt and delete branches (rerun/runner.py and rerun/branch.py do the work).

A rerun is a run of the branch it writes: it becomes the host's live run (its `work` is the
rerun instead of training), so RunBusy, `run/state`, `run/progress`, the memory hand-over and
`run.stop` all apply to it as to training; `update.cancel` is `run.stop` of that branch. A dry
run writes no branch: it runs in a thread of its own, and while it runs the host starts nothing
else. A run paused at its iteration boundary (pause, edit a tip, rerun: the loop reruns are
for) stays the live run, untouched: a rerun or dry run then runs beside it in a thread of its
own too, reading the paused parent although its trainer holds the writer lock
(branch.paused_here), and the paused run resumes only once that job has ended (one model
computes at a time; two are loaded). rerun/runner.py imports torch, so it is imported inside
the handlers: the idle server starts without it.
"""

from __future__ import annotations

import contextlib
import itertools
import logging
import threading
import time
from dataclasses import dataclass

from ...run_folder.folder import RunFolder, RunFolderError, RunLockedError
from ..protocol import ProtocolError
from ..run_manager import sentence

log = logging.getLogger("empo2.server.update")

PROGRESS_INTERVAL_S = 0.1
_ids = itertools.count(1)

# Protocol params → RerunSettings fields (the rest have the same name).
PARAM_FIELDS = {
    "checkpoint": "checkpoint",
    "variations": "variations",
    "episodes": "episodes",
    "iterations": "iterations",
    "evalEpisodes": "eval_episodes",
    "heldOut": "held_out",
    "seed": "seed",
    "dryRun": "dry_run",
}


@dataclass
class Job:
    job_id: str
    run_id: str  # the run named in the request
    branch_id: str | None  # None for a dry run
    dry_run: bool
    control: object = None  # the RunControl that stops it
    live: object = None  # the branch's LiveRun (a rerun)


class _JobHooks:
    """The rerun's progress as `update/progress` (throttled), passed on to the live run's hooks."""

    def __init__(self, host, job: Job, inner=None):
        self.host, self.job, self.inner = host, job, inner
        self._last = (None, 0.0)

    def on_state(self, state, iteration):
        if self.inner is not None:
            self.inner.on_state(state, iteration)

    def on_metrics(self, record):
        if self.inner is not None:
            self.inner.on_metrics(record)

    def on_trajectories(self, iteration, summaries):
        if self.inner is not None:
            self.inner.on_trajectories(iteration, summaries)

    def on_progress(self, iteration, phase, done, total):
        if self.inner is not None:
            self.inner.on_progress(iteration, phase, done, total)
        now = time.monotonic()
        if self._last[0] == (iteration, phase) and now - self._last[1] < PROGRESS_INTERVAL_S:
            return
        self._last = ((iteration, phase), now)
        self.host.hub.publish_threadsafe(
            "update/progress",
            {
                "jobId": self.job.job_id,
                "runId": self.job.branch_id or self.job.run_id,
                "progress": {"iteration": int(iteration), "phase": phase, "done": int(done), "total": int(total)},
            },
        )


def _settings(reruns, params: dict):
    return reruns.RerunSettings(**{PARAM_FIELDS[k]: v for k, v in params.items() if k in PARAM_FIELDS})


def _as_protocol_error(err: Exception) -> ProtocolError:
    if isinstance(err, ProtocolError):
        return err
    if isinstance(err, RunLockedError):
        return ProtocolError("RunBusy", sentence(err))
    return ProtocolError("RerunInvalid", sentence(err))


async def rerun(request, params: dict) -> dict:
    host, runs = request.host, request.host.runs
    reruns = await host.load("empo2.rerun.runner")
    settings = _settings(reruns, params)
    async with runs.launch_lock:
        paused = runs.check_idle(beside_paused=True)
        folder = runs.folder(params["runId"])
        job = Job(job_id=f"job-{next(_ids)}", run_id=params["runId"], branch_id=None, dry_run=settings.dry_run)
        if settings.dry_run or paused is not None:
            await _start_beside(host, reruns, job, folder, settings, params, paused)
            return {"jobId": job.job_id, "runId": job.run_id, "branchId": job.branch_id, "dryRun": job.dry_run}
        branch = await host.blocking(_branch, reruns, folder, settings, params)
        job.branch_id = runs.remember(branch)
        config = await host.blocking(_config, branch)
        job.live = await runs.launch(
            branch, config, resume=True, pause_after=None, work=lambda live, hooks: _rerun_work(host, job, live, hooks)
        )
        job.control = job.live.control
        runs.jobs[job.job_id] = job  # the thread's end pops it on the loop, after this
    return {"jobId": job.job_id, "runId": job.run_id, "branchId": job.branch_id, "dryRun": False}


async def _start_beside(host, reruns, job: Job, folder: RunFolder, settings, params: dict, paused) -> None:
    """A dry run, or a rerun beside a paused live run: checked (and the branch made) here, then
    run in a thread of its own. Registered before the first wait, so the paused run cannot
    resume from here on (methods/run.py)."""
    from ...rerun.branch import paused_here
    from ...training.run_control import RunControl

    job.control = RunControl()
    runs = host.runs
    runs.jobs[job.job_id] = job
    hold = (lambda: paused_here(paused.folder)) if paused is not None else contextlib.nullcontext
    try:
        if settings.dry_run:
            await host.blocking(_held, hold, _checked, _validate, folder, settings)
            target = folder
        else:
            target = await host.blocking(_held, hold, _branch, reruns, folder, settings, params)
            job.branch_id = runs.remember(target)
            settings = reruns.RerunSettings()  # the branch's rerun.json has them
    except BaseException:
        runs.jobs.pop(job.job_id, None)
        raise
    threading.Thread(
        target=_run_beside, args=(host, job, target, settings, hold), daemon=True, name=f"empo2-rerun-{job.job_id}"
    ).start()


def _held(hold, fn, *args):
    with hold():
        return fn(*args)


def _branch(reruns, folder: RunFolder, settings, params: dict) -> RunFolder:
    """The branch a rerun writes: `folder` itself when it is a branch with an unfinished rerun
    (that rerun continues), else a new branch of it (blocking)."""
    record = reruns.rerun_record(folder)
    if record is not None and record.get("status") != "finished":
        return folder
    return _checked(reruns.prepare_branch, folder, settings, params.get("name"))


def _checked(fn, *args):
    try:
        return fn(*args)
    except (RunFolderError, ValueError, OSError) as err:
        raise _as_protocol_error(err) from None


def _validate(folder: RunFolder, settings) -> None:
    """What prepare_branch checks, without creating anything (a dry run makes no branch here)."""
    from ...config import load_config
    from ...memory.layout import EVENTS_FILE
    from ...rerun.branch import checkpoint_marker, not_training, person_edits_after
    from ...rerun.runner import chosen_variations

    settings.check()
    with not_training(folder):
        checkpoint, marker = checkpoint_marker(folder, settings.checkpoint)
    edits = person_edits_after(folder.memory_path / EVENTS_FILE, marker)
    chosen_variations(load_config(folder.config()), settings.variations, edits, checkpoint, folder.run_id)


def _config(branch: RunFolder):
    from ...config import load_config

    return load_config(branch.config())


def _rerun_work(host, job: Job, live, hooks) -> None:
    """The branch's live-run thread: the rerun, then `update/finished`."""
    from ...rerun.runner import RerunSettings, rerun as run_rerun

    def adopt_trainer(trainer):
        live.trainer = trainer

    try:
        result = run_rerun(
            live.folder,
            RerunSettings(),
            hooks=_JobHooks(host, job, hooks),
            control=live.control,
            embedder=host.runs.embedder_factory(),
            on_trainer=adopt_trainer,
        )
        _finished(host, job, result.get("status", "finished"), result=result)
    except BaseException as err:
        _finished(host, job, "failed", error=sentence(err))
        raise


def _run_beside(host, job: Job, folder: RunFolder, settings, hold) -> None:
    """A dry run of `folder`, or the rerun of the branch `folder`, in its own thread."""
    from ...rerun.runner import rerun as run_rerun

    try:
        with hold():
            result = run_rerun(
                folder, settings, hooks=_JobHooks(host, job), control=job.control, embedder=host.runs.embedder_factory()
            )
        status = "stopped" if job.control.stop_requested else result.get("status", "finished")
        _finished(host, job, status, result=result)
    except BaseException as err:  # noqa: BLE001 - a failed rerun must not kill the host
        log.error(
            "%s of %s failed: %s", "dry run" if job.dry_run else "rerun", job.run_id, sentence(err), exc_info=True
        )
        _finished(host, job, "failed", error=sentence(err))


def _finished(host, job: Job, status: str, result: dict | None = None, error: str | None = None) -> None:
    event = {
        "jobId": job.job_id,
        "runId": job.run_id,
        "branchId": job.branch_id,
        "dryRun": job.dry_run,
        "status": "stopped" if status == "stopped" else status,
    }
    if result is not None and status != "failed":
        event["result"] = result
    if error is not None:
        event["error"] = error

    def end() -> None:  # on the loop, in one step: a client told "finished" may start the next
        host.runs.jobs.pop(job.job_id, None)
        host.hub.publish("update/finished", event)

    host.runs.post(end)


async def cancel(request, params: dict) -> dict:
    runs = request.host.runs
    job = runs.jobs.get(params["jobId"])
    if job is None:
        return {"cancelled": False}
    if job.live is not None and runs.live is job.live:
        runs.stop(job.live)
    else:
        job.control.stop()
    return {"cancelled": True}


async def compare(request, params: dict) -> dict:
    host, runs = request.host, request.host.runs
    reruns = await host.load("empo2.rerun.runner")
    folder = runs.folder(params["runId"])
    return {"result": await host.blocking(_checked, reruns.comparison, folder)}


async def adopt(request, params: dict) -> dict:
    host, runs = request.host, request.host.runs
    from ...rerun.branch import adopt_branch

    folder = runs.folder(params["runId"])
    await host.blocking(_checked, adopt_branch, folder)
    return {"run": runs.info(folder)}


async def delete(request, params: dict) -> dict:
    host, runs = request.host, request.host.runs
    from ...rerun.branch import delete_branch

    folder = runs.folder(params["runId"])
    if runs.live is not None and runs.live.folder.path == folder.path:
        raise ProtocolError("RunBusy", f"run '{params['runId']}' is live; stop it first.", {"runId": params["runId"]})
    await runs.memory.hand_over(folder)  # the host's own copy of its memory closes first
    await host.blocking(_checked, delete_branch, folder)
    runs.known.pop(params["runId"], None)
    return {"deleted": params["runId"]}
