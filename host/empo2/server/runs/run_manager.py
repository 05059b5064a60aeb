"""The run manager: which run folders a host knows, the one run it trains, and their state.

A host trains one run at a time (announced as `maxConcurrentRuns: 1`), in a worker thread:
PyTorch releases the GIL inside its kernels, so the event loop keeps answering while a training
step runs. The trainer talks back through `TrainerHooks` and a `RunControl` subclass; both run
in the trainer thread and only ever post to the event loop, where every change of a run's state
is made and published, so all clients see one order.

Paths: every folder a client names (`run.open`, `run.start`'s root, a config file) must resolve,
after symlinks, inside one of the host's run roots (a config file may also lie in the host's
working directory). A run id is a folder name: looked up among the folders this host has seen,
then directly inside each root.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import os
import threading
import time
from pathlib import Path

from ...atomic import iter_jsonl
from ...config import ConfigError, TrainConfig, load_config, presets
from ...one_sentence import sentence as one_sentence
from ...policy.choices import model_folder_problem
from ...rerun.jobs import RerunJobs
from ...run_folder.folder import RunFolder, RunFolderError, RunLockedError
from ...training.run_control import RecordedProgress, TrainerHooks
from ..transport.protocol import ProtocolError
from .live_run import LiveRun, ServerControl
from .memory_access import MemoryAccess
from .run_news import RunNews
from .stored_run import ACTIVE, INTERRUPTED, branch_origin, checkpoints, configured_iterations, stored_state

log = logging.getLogger("empo2.server.runs")

# How long the trainer waits, at the end of an iteration's rollout, for the loop to read the
# episodes it is about to drop; a loop that busy is not worth holding training for longer.
NUDGE_WAIT_S = 5.0


MESSAGE_CHARS = 300  # a JSON-RPC error's message: one line, whatever a library raised


def sentence(err: BaseException) -> str:
    return one_sentence(err, MESSAGE_CHARS)


def busy_sentence(run_id: str, state: str, beside_paused: bool) -> str:
    """Why the live run `run_id` (in `state`) is in the way, naming what clears it: a rerun may
    run beside a paused run, so pausing helps there; a new or resumed run needs the live run
    stopped, whatever its state (a paused run still holds the host's one training slot)."""
    if beside_paused:
        return f"the host trains run '{run_id}'; pause it (a rerun runs beside a paused run) or stop it first."
    if state in ("pausing", "paused"):
        return (
            f"run '{run_id}' is {state} and still holds the host's one training slot; stop it "
            "first (Stop Run), and Resume Run continues it later from its last checkpoint."
        )
    if state == "stopping":
        return f"run '{run_id}' is stopping; start once it has stopped."
    return f"the host already trains run '{run_id}' (one run at a time); stop it first (Stop Run)."


class _Hooks(TrainerHooks):
    """Trainer callbacks (trainer thread). The run's state and control go to the loop directly;
    its news (progress, ended episodes, the written iteration, metrics) the trainer has written
    to the run folder before it calls back (RecordedProgress), so a callback only nudges the
    loop to read the folder (run_news.py), as a run another process trains is read. Nudges
    wait in line one at a time: one pending read takes in everything written before it runs."""

    def __init__(self, manager: RunManager, live: LiveRun):
        self.manager, self.live = manager, live
        self._pending = threading.Lock()  # held from a nudge's posting until its read begins

    def on_state(self, state: str, iteration: int) -> None:
        if state == "running" and self.live.trainer is not None:
            self.manager.memory.attach_trainer(self.live)
        self.manager.post(self.manager._trainer_state, self.live, state, iteration)

    def on_progress(self, iteration: int, phase: str, done: int, total: int) -> None:
        self._nudge()

    def on_metrics(self, record: dict) -> None:
        self._nudge()

    def on_episode(self, iteration: int, summary: dict, record: dict, done: int, total: int) -> None:
        self._nudge()

    def on_trajectories(self, iteration: int, summaries: list[dict]) -> None:
        # Read before the trainer drops the iteration's ended episodes (RecordedProgress), so
        # every episode is told one by one before its iteration: waited for, briefly.
        read = threading.Event()
        self.manager.post(self._read, read)
        read.wait(NUDGE_WAIT_S)

    def _nudge(self) -> None:
        if self._pending.acquire(blocking=False):
            self.manager.post(self._read, None)

    def _read(self, read: threading.Event | None) -> None:
        """On the loop: the folder's news since the last read, published."""
        if read is None:
            self._pending.release()  # before reading: a later write nudges again
        try:
            self.manager.publish_news(self.live)
        finally:
            if read is not None:
                read.set()


class RunManager:
    def __init__(self, roots: list[Path], hub, loop: asyncio.AbstractEventLoop, embedder_factory, blocking):
        self.roots = [Path(r).resolve() for r in roots]
        self.hub = hub
        self.loop = loop
        self.embedder_factory = embedder_factory
        self.blocking = blocking  # async fn(callable, *args): runs it in the handler thread pool
        # The tip stores' one writer: the manager says when a store passes between the host and
        # a trainer, so it builds the MemoryAccess it hands them to (memory_access.py).
        self.memory = MemoryAccess(self, hub, blocking, embedder_factory)
        self.live: LiveRun | None = None
        self.known: dict[str, Path] = {}
        self._summaries: dict[Path, tuple[tuple, list[dict]]] = {}
        self._file_log: logging.Handler | None = None
        self.launch_lock = asyncio.Lock()  # run.start and run.resume: one launch at a time
        # Reruns and dry runs in progress (rerun/jobs.py; methods/update.py starts them).
        self.jobs = RerunJobs(hub.publish, hub.publish_threadsafe, self.post, sentence, embedder_factory)

    def post(self, fn, *args) -> None:
        """From the trainer thread: run fn(*args) on the loop, in posting order."""
        try:
            self.loop.call_soon_threadsafe(fn, *args)
        except RuntimeError:
            pass  # loop closed: the host is exiting

    # -- paths and ids ---------------------------------------------------------------------------

    def inside_roots(self, path: str | Path, also: tuple[Path, ...] = ()) -> Path:
        """The resolved path, or PathNotAllowed when it escapes every root."""
        try:
            resolved = Path(os.path.expanduser(str(path))).resolve(strict=False)
        except (OSError, RuntimeError, ValueError):
            raise ProtocolError("PathNotAllowed", "the path cannot be resolved.") from None
        for root in (*self.roots, *also):
            if resolved == root or resolved.is_relative_to(root):
                return resolved
        raise ProtocolError(
            "PathNotAllowed", f"{str(path)[:200]} is outside the host's run roots ({', '.join(map(str, self.roots))})."
        )

    def folder(self, run_id: str) -> RunFolder:
        """The folder of a run id (RunNotFound when there is none)."""
        if self.live is not None and self.live.run_id == run_id:
            return self.live.folder
        path = self.known.get(run_id)
        candidates = [path] if path is not None else [root / run_id for root in self.roots]
        for candidate in candidates:
            if (candidate / "config.json").is_file():
                resolved = self.inside_roots(candidate)
                self.known[run_id] = resolved
                return RunFolder(resolved)
        raise ProtocolError("RunNotFound", f"no run '{run_id}' in the host's run roots.")

    def ended_episode(self, folder: RunFolder, episode_id: str) -> dict | None:
        """An ended episode of a run's iteration in progress (not written yet), as it was when it
        ended, from what its trainer wrote (blocking); None once the iteration is written."""
        return next(
            (e["record"] for e in folder.ended_episodes() if (e.get("record") or {}).get("id") == episode_id), None
        )

    def remember(self, folder: RunFolder) -> str:
        """A run id for a folder: its name, made unique among the folders this host knows."""
        name, n = folder.path.name, 1
        run_id = name
        while self.known.get(run_id, folder.path) != folder.path:
            n += 1
            run_id = f"{name}~{n}"
        self.known[run_id] = folder.path
        return run_id

    def run_id_of(self, folder: RunFolder) -> str:
        for run_id, path in self.known.items():
            if path == folder.path:
                return run_id
        return self.remember(folder)

    def live_run(self, run_id: str | None) -> LiveRun:
        """The live run (named or not); RunNotFound or RunStateInvalid when it is not live."""
        if run_id is None or (self.live is not None and self.live.run_id == run_id):
            if self.live is None:
                raise ProtocolError("RunNotFound", "no run is training in this host.")
            return self.live
        self.folder(run_id)  # RunNotFound for an unknown id
        raise ProtocolError("RunStateInvalid", f"run '{run_id}' is not training in this host.")

    # -- what clients see ------------------------------------------------------------------------

    def info(self, folder: RunFolder, stored: dict | None = None, state: str | None = None) -> dict:
        """RunInfo of a folder; a live run's state is the host's, not run.json's. `stored` and
        `state` (run.json and its state corrected by the writer lock) when the caller has them."""
        stored = folder.state() if stored is None else stored
        live = self.live if self.live is not None and self.live.folder.path == folder.path else None
        info = {
            "runId": live.run_id if live else self.run_id_of(folder),
            "path": str(folder.path),
            "state": live.state if live else state or stored_state(folder, stored),
            "iteration": live.iteration if live else int(stored.get("iteration", 0) or 0),
            "iterations": live.config.iterations if live else configured_iterations(folder),
            # The host's last run/state of a run that ends comes while it is still self.live:
            # "true while this host trains the run" (the schema) means an active state too.
            "live": live is not None and live.state in ACTIVE,
            "updated": stored.get("updated") if isinstance(stored.get("updated"), (int, float)) else None,
        }
        error = live.error if live else stored.get("error")
        if info["state"] == "failed" and isinstance(error, str):
            info["error"] = error
        origin = branch_origin(folder)
        if origin is not None:
            info["parent"] = origin
        return info

    def status(self, folder: RunFolder) -> dict:
        """RunStatus: the info plus config, latest metrics, checkpoints, progress (blocking I/O)."""
        info = self.info(folder)
        live = self.live if info["live"] else None
        metrics = folder.metrics()
        try:
            config = folder.config()
        except (OSError, ValueError):
            config = {}
        return {
            **info,
            "config": config if isinstance(config, dict) else {},
            "latestMetrics": metrics[-1] if metrics else None,
            "checkpoints": checkpoints(folder),
            # A run another process trains says where it is in its progress.json.
            "progress": live.progress if live else folder.progress() if info["state"] in ACTIVE else None,
            "pauseAfterIteration": live.control.pause_after if live and live.control else None,
            "episodes": len(self.summaries(folder)),
        }

    def summaries(self, folder: RunFolder) -> list[dict]:
        """The trajectory index, parsed once per change of the file (size, mtime)."""
        try:
            st = folder.index_path.stat()
            stamp = (st.st_size, st.st_mtime_ns)
        except FileNotFoundError:
            return []
        cached = self._summaries.get(folder.path)
        if cached is not None and cached[0] == stamp:
            return cached[1]
        items = [s for s in iter_jsonl(folder.index_path) if isinstance(s, dict)]
        self._summaries[folder.path] = (stamp, items)
        return items

    def list_runs(self) -> list[dict]:
        return [self.info(f) for f in self.run_folders()]

    def run_folders(self) -> list[RunFolder]:
        """Every run folder in the roots, those opened by path, and the live run's."""
        folders: dict[Path, RunFolder] = {}
        for root in self.roots:
            if root.is_dir():
                for child in sorted(root.iterdir()):
                    if (child / "config.json").is_file():
                        resolved = child.resolve()
                        if any(resolved == r or resolved.is_relative_to(r) for r in self.roots):
                            folders.setdefault(resolved, RunFolder(resolved))
        for path in self.known.values():
            if (path / "config.json").is_file():
                folders.setdefault(path, RunFolder(path))
        if self.live is not None:
            folders.setdefault(self.live.folder.path, self.live.folder)
        return list(folders.values())

    # -- starting and controlling -----------------------------------------------------------------

    def config_for_start(self, params: dict) -> tuple[TrainConfig, str]:
        """The validated config and the stem of a default run name (blocking: reads files). A
        local policy.model folder that holds no model is refused here, not once the run's
        trainer loads it."""
        config, stem = self._config_for_start(params)
        problem = model_folder_problem(config.policy.model)
        if problem is not None:
            raise ProtocolError("ConfigInvalid", problem)
        return config, stem

    def _config_for_start(self, params: dict) -> tuple[TrainConfig, str]:
        overrides = params.get("overrides", [])
        try:
            if "config" in params:
                return load_config(dict(params["config"]), overrides), "run"
            if "configFile" in params:
                path = self.inside_roots(params["configFile"], also=(Path.cwd().resolve(),))
                return load_config(str(path), overrides), path.stem
            preset = params.get("preset", "builtin")
            if preset not in presets():
                raise ProtocolError(
                    "ConfigInvalid", f"no preset named '{preset[:100]}' (presets: {', '.join(sorted(presets()))})."
                )
            return load_config(preset, overrides), preset
        except ConfigError as err:
            raise ProtocolError("ConfigInvalid", sentence(err)) from None

    def create_folder(self, root: Path, name: str | None, stem: str, config: TrainConfig) -> RunFolder:
        """A new run folder (blocking); RunExists when a given name is taken."""
        root.mkdir(parents=True, exist_ok=True)
        run_id = name or f"{stem}-{time.strftime('%Y%m%d-%H%M%S')}"
        if not name:
            base, n = run_id, 1
            while (root / run_id).exists():
                n += 1
                run_id = f"{base}-{n}"
        config.root, config.name = str(root), run_id
        try:
            return RunFolder.create(root, run_id, config.to_dict())
        except RunFolderError as err:
            raise ProtocolError("RunExists", sentence(err)) from None

    def check_idle(self, beside_paused: bool = False) -> LiveRun | None:
        """RunBusy unless the host may load a model now; with `beside_paused`, a live run paused
        at its iteration boundary is no obstacle (a rerun runs beside it) and is returned."""
        live = self.live
        if live is not None and not (beside_paused and live.state == "paused"):
            raise ProtocolError(
                "RunBusy", busy_sentence(live.run_id, live.state, beside_paused), {"runId": live.run_id}
            )
        job = self.side_job()
        if job is not None:  # trains no live run but holds a model all the same
            doing = "dry-running" if job.dry_run else "rerunning"
            raise ProtocolError(
                "RunBusy",
                f"the host is {doing} an update of run '{job.run_id}'; wait for it or cancel it.",
                {"runId": job.run_id},
            )
        return live

    def side_job(self):
        """The rerun or dry run that runs in a thread of its own (methods/update.py), if any; a
        rerun that is the live run is not one."""
        return self.jobs.side_job()

    async def launch(
        self, folder: RunFolder, config: TrainConfig, resume: bool, pause_after: int | None, work=None
    ) -> LiveRun:
        """Starts training `folder` in a worker thread; the memory store moves to the trainer."""
        self.check_idle()
        run_id = self.run_id_of(folder)
        try:  # a run that another process (a CLI `train`) is writing stays that process's
            with folder.writer_lock():
                pass
        except RunLockedError as err:
            raise ProtocolError("RunBusy", sentence(err), {"runId": run_id}) from None
        live = LiveRun(
            run_id=run_id,
            folder=folder,
            config=config,
            resume=resume,
            iteration=int(folder.state().get("iteration", 0) or 0) if resume else 0,
        )
        live.control = ServerControl(
            on_paused=lambda: self._control_paused(live),
            on_resumed=lambda: self.post(self._resumed, live),
            iteration=live.trained_iteration,
        )
        live.control.pause_after = pause_after
        live.work = work
        # Its news is read from here on; what an earlier process left of an iteration it did not
        # finish is played again, so it is no news.
        folder.drop_ended_episodes()
        live.news = RunNews(run_id, folder)
        self.live = live
        await self.memory.hand_over(folder)  # no second writer: the host's own store closes first
        self._attach_file_log(folder)
        live.thread = threading.Thread(target=self._train, args=(live,), daemon=True, name=f"empo2-train-{run_id}")
        live.thread.start()
        self._publish_state(live)
        log.info("run %s %s", run_id, "resumed" if resume else "started")
        return live

    def _train(self, live: LiveRun) -> None:
        """The worker thread: train (or do the run's `work`), report how it ended."""
        error = None
        hooks = _Hooks(self, live)
        try:
            if live.work is not None:
                live.work(live, hooks)
            else:
                self._train_run(live, hooks)
        except BaseException as err:  # noqa: BLE001 - a failed run must not kill the host
            error = sentence(err)
            log.error("run %s failed: %s", live.run_id, error, exc_info=True)
            try:
                if not isinstance(err, RunLockedError):  # else another process's run: hands off
                    iteration = live.trained_iteration(live.iteration)
                    live.folder.set_state("failed", iteration=iteration, error=error)
            except Exception:  # noqa: BLE001 - the folder itself may be the problem
                log.exception("could not record the failure of run %s", live.run_id)
        self.post(self._ended, live, error)

    def _train_run(self, live: LiveRun, hooks: _Hooks) -> None:
        """Builds the trainer (loads the model) and trains."""
        from ...training.trainer import Trainer

        if live.config.policy.model == "builtin":  # built once, minutes on a CPU: say so
            from ...policy.builtin import BuildCancelled, ensure_builtin_policy

            def building(done: int, total: int, _epoch: int, _loss: float) -> None:
                if live.control.stop_requested:  # Cancel while it builds: nothing was written
                    raise BuildCancelled()
                preparing.on_progress(0, "preparing", done, total)

            preparing = RecordedProgress(hooks, live.folder)  # the trainer's own comes with it

            try:
                ensure_builtin_policy(progress=building)
            except BuildCancelled:
                log.info("run %s stopped while the built-in policy was being built", live.run_id)
                live.folder.set_state("stopped", iteration=0)
                return
        live.trainer = Trainer(
            live.config, live.folder, hooks=hooks, control=live.control, embedder=self.embedder_factory()
        )
        # The loaded model and libraries are long-lived: exempt them from the cyclic GC, whose
        # full passes otherwise stop every thread, the event loop too, for ~0.2 s (measured).
        gc.freeze()
        try:
            live.trainer.run(resume=live.resume)
        finally:
            gc.unfreeze()  # collectable again once the run is over (and at exit)

    def _control_paused(self, live: LiveRun) -> None:
        """Trainer thread, blocked between iterations: record and announce the pause."""
        try:
            live.folder.set_state("paused", iteration=live.trained_iteration())
        except OSError:
            log.exception("could not record the pause of run %s", live.run_id)
        self.post(self._paused, live)

    def pause(self, live: LiveRun, after: int | None) -> None:
        if live.state not in ("starting", "running", "pausing", "paused"):
            raise ProtocolError("RunStateInvalid", f"run '{live.run_id}' is {live.state}; it cannot pause.")
        if after is not None and after > live.iteration:
            live.control.pause_after = after
            return
        live.control.pause()
        if live.state in ("starting", "running"):
            self._set_state(live, "pausing")

    def resume_live(self, live: LiveRun) -> None:
        if live.state not in ("pausing", "paused") and not live.control.paused:
            raise ProtocolError("RunStateInvalid", f"run '{live.run_id}' is {live.state}, not paused.")
        live.control.pause_after = None
        live.control.resume()
        if live.state in ("pausing", "paused"):
            self._set_state(live, "running" if live.trainer is not None else "starting")

    def stop(self, live: LiveRun) -> None:
        if live.state not in ACTIVE:
            raise ProtocolError("RunStateInvalid", f"run '{live.run_id}' is {live.state}; it cannot stop.")
        live.control.stop()
        self._set_state(live, "stopping")

    async def shutdown(self, grace_s: float, hurry: asyncio.Event | None = None) -> str | None:
        """Interrupts the live run: it ends `interrupted` at its next iteration boundary, waited
        for at most grace_s (or until `hurry` is set: "now", a second signal). run.json says
        `interrupted` at once, so a host killed while it waits leaves the truth on disk. A run
        still inside an iteration when the wait ends is left to its last checkpoint
        (`abandoned`); the process must then exit without joining the trainer thread."""
        live = self.live
        if live is None:
            return None
        if live is self.abandoned:  # asked twice (a signal during a `shutdown` request)
            return live.run_id
        live.control.interrupt()
        if live.state in ACTIVE:
            self._set_state(live, "stopping")
        await self.blocking(self._record_interrupted, live)
        waits = [asyncio.ensure_future(live.ended.wait())]
        if hurry is not None:
            waits.append(asyncio.ensure_future(hurry.wait()))
        await asyncio.wait(waits, timeout=grace_s, return_when=asyncio.FIRST_COMPLETED)
        for w in waits:
            w.cancel()
        if not live.ended.is_set():
            log.warning(
                "run %s is inside an iteration; it resumes from its last checkpoint (iteration %d)",
                live.run_id,
                live.iteration,
            )
            self.abandoned = live
        return live.run_id

    abandoned: LiveRun | None = None  # a run whose trainer thread was still busy at shutdown

    def _record_interrupted(self, live: LiveRun) -> None:
        try:
            live.folder.set_state(INTERRUPTED, iteration=live.iteration)
        except OSError:
            log.exception("could not record the interruption of run %s", live.run_id)

    # -- on the loop: what the trainer reported ---------------------------------------------------

    def _set_state(self, live: LiveRun, state: str) -> None:
        if live.state != state:
            live.state = state
            self._publish_state(live)

    def _publish_state(self, live: LiveRun) -> None:
        self.hub.publish("run/state", {"run": self.info(live.folder, stored={})})

    def _trainer_state(self, live: LiveRun, state: str, iteration: int) -> None:
        live.iteration = iteration
        if state == "running":  # said once, when the trainer has opened its memory
            live.memory_ready.set()
            if live.state == "starting":
                self._set_state(live, "pausing" if live.control.paused else "running")
            return
        self.publish_news(live)  # its last lines before its end
        live.progress = None
        self._set_state(live, state)  # finished, stopped or interrupted

    def _paused(self, live: LiveRun) -> None:
        if live.control.paused and not live.control.stop_requested:
            self._set_state(live, "paused")

    def _resumed(self, live: LiveRun) -> None:
        if not live.control.paused and live.state in ("pausing", "paused"):
            self._set_state(live, "running")

    def publish_news(self, live: LiveRun) -> None:
        """On the loop: what the live run's trainer wrote since the last read, told to every
        client (a nudge from its hooks; before its state changes, so its last lines come first).
        The reads are a few small appends: done here, in the loop's order, not in a thread."""
        if live.news is None:
            return
        for method, params in live.news.read():
            if method == "run/progress":
                live.progress = params["progress"]
            elif method == "run/metrics":
                live.iteration = max(live.iteration, int(params["records"][-1].get("iteration", 0)))
            self.hub.publish(method, params)

    def _ended(self, live: LiveRun, error: str | None) -> None:
        self.publish_news(live)
        if error is not None:
            live.error = error
            live.state = "failed"
            self._publish_state(live)
        elif live.state not in ("finished", "stopped", INTERRUPTED):
            self._set_state(
                live,
                INTERRUPTED if live.control.interrupted else "stopped" if live.control.stop_requested else "finished",
            )
        self._detach_file_log()
        live.news = None
        self.memory.take_back(live)
        live.memory_ready.set()
        if self.live is live:
            self.live = None
        live.ended.set()
        log.info("run %s ended (%s)", live.run_id, live.state)

    # -- the run folder's host.log ----------------------------------------------------------------

    def _attach_file_log(self, folder: RunFolder) -> None:
        """Training logs go to the run folder while it trains (and only then: browsing a run
        must not write into it)."""
        handler = logging.FileHandler(folder.log_path, encoding="utf-8")
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
        handler.setLevel(logging.INFO)
        logging.getLogger("empo2").addHandler(handler)
        self._file_log = handler

    def _detach_file_log(self) -> None:
        if self._file_log is not None:
            logging.getLogger("empo2").removeHandler(self._file_log)
            self._file_log.close()
            self._file_log = None


__all__ = ["RunManager", "sentence"]
