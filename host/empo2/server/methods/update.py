"""`update.*` and `branch.*`: rerun the off-policy update on a branch, dry-run it, compare,
adopt and delete branches. The protocol's side only: the jobs themselves are the host's
`RerunJobs` (rerun/jobs.py), the work rerun/runner.py and rerun/branch.py.

A rerun while nothing is paused runs as the host's live run (the branch's `work`). A dry run,
or a rerun beside a run paused at its iteration boundary (pause, edit a tip, rerun: the loop
reruns are for), runs beside it: the paused run stays the live run, untouched, and is read
through a handle that says this process keeps it paused (`RunFolder.kept_paused`), although its
trainer holds the writer lock. rerun/runner.py imports torch, so it is imported inside the
handlers: the idle server starts without it.
"""

from __future__ import annotations

import logging

from ...run_folder.folder import RunFolder, RunFolderError, RunLockedError
from ..runs.run_manager import sentence
from ..transport.protocol import ProtocolError

log = logging.getLogger("empo2.server.update")

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
        if settings.dry_run or paused is not None:
            if paused is not None and folder.path.resolve() == paused.folder.path.resolve():
                folder = folder.kept_paused()
            job = await _start_beside(host, reruns, folder, settings, params)
            return job.answer()
        job = runs.jobs.new(params["runId"], dry_run=False)
        branch = await host.blocking(_branch, reruns, folder, settings, params)
        job.branch_id = runs.remember(branch)
        config = await host.blocking(_config, branch)
        job.live = await runs.launch(
            branch,
            config,
            resume=True,
            pause_after=None,
            work=lambda live, hooks: runs.jobs.run_as_live(job, live, hooks),
        )
        job.control = job.live.control
        runs.jobs.add(job)  # the thread's end forgets it on the loop, after this
    return job.answer()


async def _start_beside(host, reruns, folder: RunFolder, settings, params: dict):
    """A dry run, or a rerun beside a paused live run: checked (and the branch made) here, then
    run in a thread of its own. Registered before the first wait, so the paused run cannot
    resume from here on (methods/run.py)."""
    runs = host.runs
    job = runs.jobs.new(params["runId"], dry_run=settings.dry_run)
    runs.jobs.add(job)
    try:
        if settings.dry_run:
            await host.blocking(_checked, _validate, folder, settings)
            target = folder
        else:
            target = await host.blocking(_branch, reruns, folder, settings, params)
            job.branch_id = runs.remember(target)
            settings = reruns.RerunSettings()  # the branch's rerun.json has them
    except BaseException:
        runs.jobs.forget(job)
        raise
    runs.jobs.start_beside(job, target, settings)
    return job


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


async def cancel(request, params: dict) -> dict:
    runs = request.host.runs
    job = runs.jobs.get(params["jobId"])
    if job is None:
        return {"cancelled": False}
    if not job.beside and runs.live is job.live:
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
