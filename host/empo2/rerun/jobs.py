"""Reruns and dry runs in progress: the host's service behind `update.rerun` and `update.cancel`.

A job is one rerun or dry run of a run's off-policy update (runner.py does the work). Two ways to
run one:

- **as the live run** (`run_as_live`): a rerun while nothing is paused becomes the host's live
  run, its branch's `work` (the server launches it like training), so RunBusy, `run/state`,
  `run/progress`, the memory hand-over and `run.stop` apply to it as to training;
- **beside** (`start_beside`): a dry run, or a rerun beside a paused live run, runs in a thread
  of its own. While such a job exists the host starts nothing else and the paused run does not
  resume (`side_job`): one model computes at a time, two are loaded.

Each job publishes its progress as `update/progress` (throttled) and ends with one
`update/finished`, sent on the event loop in the same step that forgets the job, so a client
told "finished" may start the next one. The service knows nothing of the server: it is given
how to publish, how to run something on the loop, and how to put an error in one sentence.
"""

from __future__ import annotations

import itertools
import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..training.run_control import PROGRESS_INTERVAL_S, ProgressThrottle, RunControl, TrainerHooks

if TYPE_CHECKING:
    from ..run_folder.folder import RunFolder
    from .runner import RerunSettings

log = logging.getLogger("empo2.rerun.jobs")


@dataclass
class RerunJob:
    """One rerun or dry run in progress."""

    job_id: str
    run_id: str  # the run named in the request
    dry_run: bool
    control: RunControl = field(default_factory=RunControl)  # what stops it
    branch_id: str | None = None  # the branch it writes; None for a dry run
    live: Any = None  # the branch's live run (server LiveRun) when it runs as the live run

    @property
    def beside(self) -> bool:
        """Runs in a thread of its own, not as the host's live run."""
        return self.live is None

    def answer(self) -> dict:
        """What `update.rerun` answers."""
        return {"jobId": self.job_id, "runId": self.run_id, "branchId": self.branch_id, "dryRun": self.dry_run}


class JobHooks(TrainerHooks):
    """A job's progress as `update/progress`, passed on to the live run's own hooks (if any)."""

    def __init__(self, publish_threadsafe: Callable[[str, dict], None], job: RerunJob, inner: TrainerHooks | None):
        self.publish_threadsafe, self.job, self.inner = publish_threadsafe, job, inner or TrainerHooks()
        self._throttle = ProgressThrottle(PROGRESS_INTERVAL_S)

    def on_state(self, state: str, iteration: int) -> None:
        self.inner.on_state(state, iteration)

    def on_metrics(self, record: dict) -> None:
        self.inner.on_metrics(record)

    def on_trajectories(self, iteration: int, summaries: list[dict]) -> None:
        self.inner.on_trajectories(iteration, summaries)

    def on_progress(self, iteration: int, phase: str, done: int, total: int) -> None:
        self.inner.on_progress(iteration, phase, done, total)
        if not self._throttle.due(iteration, phase):
            return
        progress = {"iteration": int(iteration), "phase": phase, "done": int(done), "total": int(total)}
        self.publish_threadsafe(
            "update/progress",
            {"jobId": self.job.job_id, "runId": self.job.branch_id or self.job.run_id, "progress": progress},
        )


class RerunJobs:
    """The jobs of one host.

    publish / publish_threadsafe: send a notification to every client (from the loop / any thread).
    post: run a callable on the event loop, in posting order.
    describe: an error as the one sentence a client sees.
    embedder_factory: the sentence embedder a rerun's memory uses.
    """

    def __init__(
        self,
        publish: Callable[[str, dict], None],
        publish_threadsafe: Callable[[str, dict], None],
        post: Callable[..., None],
        describe: Callable[[BaseException], str],
        embedder_factory: Callable[[], Any],
    ):
        self._publish, self._publish_threadsafe, self._post = publish, publish_threadsafe, post
        self._describe, self._embedder_factory = describe, embedder_factory
        self._jobs: dict[str, RerunJob] = {}
        self._ids = itertools.count(1)

    # -- the registry ----------------------------------------------------------------------------

    def new(self, run_id: str, dry_run: bool) -> RerunJob:
        """A job with a fresh id, not registered yet."""
        return RerunJob(job_id=f"job-{next(self._ids)}", run_id=run_id, dry_run=dry_run)

    def add(self, job: RerunJob) -> None:
        """Registers a job: from here on the host counts it as running (a live rerun once it is
        the live run; one beside before its first wait, so a paused run cannot resume)."""
        self._jobs[job.job_id] = job

    def get(self, job_id: str) -> RerunJob | None:
        return self._jobs.get(job_id)

    def forget(self, job: RerunJob) -> None:
        """Unregisters a job that never started (its checks failed)."""
        self._jobs.pop(job.job_id, None)

    def side_job(self) -> RerunJob | None:
        """A job running beside the live run, if any (it holds a model of its own)."""
        return next((job for job in self._jobs.values() if job.beside), None)

    # -- running ---------------------------------------------------------------------------------

    def run_as_live(self, job: RerunJob, live, hooks: TrainerHooks) -> None:
        """The branch's live-run thread (`work`): the rerun, then `update/finished`."""
        from .runner import RerunSettings, rerun

        def adopt_trainer(trainer) -> None:
            live.trainer = trainer

        try:
            result = rerun(
                live.folder,
                RerunSettings(),  # the branch's rerun.json has the settings
                hooks=JobHooks(self._publish_threadsafe, job, hooks),
                control=live.control,
                embedder=self._embedder_factory(),
                on_trainer=adopt_trainer,
            )
            self._finished(job, result.get("status", "finished"), result=result)
        except BaseException as err:
            self._finished(job, "failed", error=self._describe(err))
            raise

    def start_beside(self, job: RerunJob, folder: RunFolder, settings: RerunSettings) -> None:
        """Runs a dry run of `folder`, or the rerun of the branch `folder`, in a thread of its own."""
        threading.Thread(
            target=self._run_beside, args=(job, folder, settings), daemon=True, name=f"empo2-rerun-{job.job_id}"
        ).start()

    def _run_beside(self, job: RerunJob, folder: RunFolder, settings: RerunSettings) -> None:
        from .runner import rerun

        try:
            result = rerun(
                folder,
                settings,
                hooks=JobHooks(self._publish_threadsafe, job, None),
                control=job.control,
                embedder=self._embedder_factory(),
            )
            status = "stopped" if job.control.stop_requested else result.get("status", "finished")
            self._finished(job, status, result=result)
        except BaseException as err:  # noqa: BLE001 - a failed rerun must not kill the host
            what = "dry run" if job.dry_run else "rerun"
            log.error("%s of %s failed: %s", what, job.run_id, self._describe(err), exc_info=True)
            self._finished(job, "failed", error=self._describe(err))

    def _finished(self, job: RerunJob, status: str, result: dict | None = None, error: str | None = None) -> None:
        event = {**job.answer(), "status": status}
        if result is not None and status != "failed":
            event["result"] = result
        if error is not None:
            event["error"] = error

        def end() -> None:  # on the loop, in one step: a client told "finished" may start the next
            self._jobs.pop(job.job_id, None)
            self._publish("update/finished", event)

        self._post(end)
