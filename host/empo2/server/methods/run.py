"""`run.*`: start, pause, resume, stop, list, open, status, metrics.

Starting and resuming share one lock, so two clients racing to start get one run and one
RunBusy, and no orphan folder.
"""

from __future__ import annotations

from ...config import ConfigError, load_config
from ...run_folder.folder import RunFolder, RunFolderError
from ..runs.run_manager import sentence
from ..transport.protocol import ProtocolError


async def start(request, params: dict) -> dict:
    host, runs = request.host, request.host.runs
    async with runs.launch_lock:
        runs.check_idle()
        root = runs.inside_roots(params["root"]) if "root" in params else runs.roots[0]
        config, stem = await host.blocking(runs.config_for_start, params)
        folder = await host.blocking(runs.create_folder, root, params.get("name"), stem, config)
        live = await runs.launch(folder, config, resume=False, pause_after=params.get("pauseAfterIteration"))
    return {"run": runs.info(live.folder, stored={})}


async def pause(request, params: dict) -> dict:
    runs = request.host.runs
    live = runs.live_run(params.get("runId"))
    runs.pause(live, params.get("afterIteration"))
    return {"run": runs.info(live.folder, stored={})}


async def resume(request, params: dict) -> dict:
    """A paused live run continues; a run that is not live resumes from its last checkpoint."""
    host, runs = request.host, request.host.runs
    run_id = params.get("runId")
    live = runs.live
    if live is not None and run_id in (None, live.run_id):
        if "overrides" in params:
            raise ProtocolError(
                "RunStateInvalid",
                f"run '{live.run_id}' is live; overrides apply only when resuming a run from its checkpoint.",
            )
        job = runs.side_job()
        if job is not None and live.state == "paused":  # one model computes at a time
            doing = "dry run" if job.dry_run else f"rerun on branch '{job.branch_id}'"
            raise ProtocolError(
                "RunBusy",
                f"a {doing} of run '{job.run_id}' runs beside the paused "
                f"run '{live.run_id}'; it resumes once that has ended (or cancel it).",
                {"runId": live.run_id},
            )
        runs.resume_live(live)
        if "pauseAfterIteration" in params:
            live.control.pause_after = params["pauseAfterIteration"]
        return {"run": runs.info(live.folder, stored={})}
    if run_id is None:
        raise ProtocolError("RunNotFound", "no run is training in this host; name the run to resume.")
    async with runs.launch_lock:
        runs.check_idle()
        folder = runs.folder(run_id)
        config = await host.blocking(_resumed_config, folder, params.get("overrides", []))
        live = await runs.launch(folder, config, resume=True, pause_after=params.get("pauseAfterIteration"))
    return {"run": runs.info(live.folder, stored={})}


def _resumed_config(folder: RunFolder, overrides: list[str]):
    try:
        return load_config(folder.config(), overrides)
    except ConfigError as err:
        raise ProtocolError("ConfigInvalid", sentence(err)) from None
    except (OSError, ValueError) as err:
        raise ProtocolError("ConfigInvalid", f"the run's config.json cannot be read ({sentence(err)})") from None


async def stop(request, params: dict) -> dict:
    runs = request.host.runs
    live = runs.live_run(params.get("runId"))
    runs.stop(live)
    return {"run": runs.info(live.folder, stored={})}


async def list_runs(request, params: dict) -> dict:
    runs = request.host.runs
    return {"runs": await request.host.blocking(runs.list_runs), "roots": [str(r) for r in runs.roots]}


async def open_run(request, params: dict) -> dict:
    """Registers an existing folder for browsing or resuming; writes nothing."""
    host, runs = request.host, request.host.runs
    path = runs.inside_roots(params["path"])

    def opened():
        try:
            folder = RunFolder.open(path)
        except (RunFolderError, OSError) as err:
            raise ProtocolError("RunNotFound", sentence(err)) from None
        runs.remember(folder)
        return runs.status(folder)

    return {"run": await host.blocking(opened)}


async def status(request, params: dict) -> dict:
    host, runs = request.host, request.host.runs
    run_id = params.get("runId")
    if run_id is None:
        if runs.live is None:
            return {"run": None}
        folder = runs.live.folder
    else:
        folder = runs.folder(run_id)
    return {"run": await host.blocking(runs.status, folder)}


async def metrics(request, params: dict) -> dict:
    host, runs = request.host, request.host.runs
    folder = runs.folder(params["runId"])
    since = params.get("sinceIteration", 0)
    records = await host.blocking(folder.metrics)
    return {"records": [r for r in records if isinstance(r.get("iteration"), int) and r["iteration"] > since]}
