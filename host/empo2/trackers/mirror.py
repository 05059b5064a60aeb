"""The mirror: a thread that follows a run folder and hands what it finds to the trackers.

    with mirrored(folder, config.report_to):    # Trainer.run and a rerun's branch
        ...train...

The trainer never calls a tracker. The mirror reads the files the trainer writes anyway, as the
host's follower of other processes' runs does (server/runs/followed_runs.py), through the same
readers: `read_appended` for the new whole lines of metrics.jsonl and of the memory's event log,
and the run folder's own paths (`RunFolder.trajectory_path` for an iteration's episodes). Every
`LOOK_INTERVAL_S`, and once more when
training stops, it sends each new metrics line, the tips added, edited or deleted up to that
iteration, and `SAMPLED_EPISODES` of its episodes to every tracker still mirroring.

A tracker never costs the run: one that is not installed, fails to start or raises later (a full
disk, no network, a bug) gets one warning in the run's log (`empo2.trackers`, which reaches the
extension as every training line does) and is dropped for the rest of the run; training goes on
and metrics.jsonl, the record, is complete either way. A tracker that hangs delays only this
thread: stopping waits `STOP_WAIT_S` for it, then leaves it behind with a warning.

Resume and branches: `trackers.json` in the run folder (replaced atomically after each look)
holds the last iteration mirrored, how far the memory log was read and what each tracker asked to
keep (the W&B run id). A resumed run reopens the same tracker runs and skips the iterations they
already hold (a resume retrains the iterations after its checkpoint; on CPU it reproduces them bit
for bit, elsewhere the tracker keeps the first try). A branch has no `trackers.json` of its own
yet: it gets tracker runs of its own, named after its parent and checkpoint, and its memory log
is read from where the copy of its parent's ended.
"""

from __future__ import annotations

import contextlib
import json
import logging
import threading
import time
from collections.abc import Iterator

from ..atomic import atomic_write_json, read_appended
from ..memory.layout import EVENTS_FILE
from ..one_sentence import sentence
from ..run_folder.branch_files import PARENT_FILE
from ..run_folder.folder import RunFolder
from .sinks import SINKS, TrackerRun

log = logging.getLogger("empo2.trackers")

STATE_FILE = "trackers.json"  # in the run folder: what has been mirrored (docs/run-folder.md)
LOOK_INTERVAL_S = 2.0
STOP_WAIT_S = 60.0
SAMPLED_EPISODES = 3
ACTIONS_CHARS = 400  # an episode's actions in its table row, cut to this many characters
FORMAT = 1


@contextlib.contextmanager
def mirrored(
    folder: RunFolder, names: list[str], interval_s: float = LOOK_INTERVAL_S, sinks: dict | None = None
) -> Iterator[TrackerMirror | None]:
    """Mirrors `folder` to the trackers `names` while the block runs (nothing when empty)."""
    if not names:
        yield None
        return
    mirror = TrackerMirror(folder, names, interval_s, sinks)
    mirror.start()
    try:
        yield mirror
    finally:
        mirror.stop()


class TrackerMirror:
    def __init__(
        self, folder: RunFolder, names: list[str], interval_s: float = LOOK_INTERVAL_S, sinks: dict | None = None
    ):
        self.folder = folder
        self.names = list(dict.fromkeys(names))
        self.interval_s = interval_s
        self.kinds = sinks if sinks is not None else SINKS
        self.live: dict[str, object] = {}
        self.state = self._read_state()
        self._metrics_offset = 0  # metrics.jsonl is read whole once per process: skipped by iteration
        self._pending: list[tuple[int | None, list]] = []  # tip rows of iterations not yet mirrored
        self._failure: str | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._follow, name=f"empo2-trackers-{folder.run_id}", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self, wait_s: float = STOP_WAIT_S) -> None:
        """Mirrors what is left, closes the trackers; never raises, waits at most `wait_s`."""
        self._stop.set()
        self._thread.join(wait_s)
        if self._thread.is_alive():
            log.warning(
                "the trackers of run %s did not finish within %.0f s; training has ended "
                "and metrics.jsonl holds every iteration",
                self.folder.run_id,
                wait_s,
            )

    # -- the thread ---------------------------------------------------------------------------------

    def _follow(self) -> None:
        try:
            self._open()
            while True:
                stopping = self._stop.is_set()
                self._look()
                if stopping or not self.live:
                    break
                self._stop.wait(self.interval_s)
        except Exception as err:  # noqa: BLE001 - the mirror's own bug: still never the run's end
            log.warning(
                "the trackers of run %s stopped (%s); training goes on and metrics.jsonl keeps every iteration",
                self.folder.run_id,
                sentence(err),
            )
        for name in list(self.live):
            self._call(name, "close")
        # What the trackers cost the trainer's process: this thread's CPU time, every call into
        # the trackers included (W&B's service process and trackio's writer thread not).
        log.info(
            "the trackers mirrored run %s up to iteration %d in %.2f s of CPU",
            self.folder.run_id,
            self.state["iteration"],
            time.thread_time(),
        )

    def _open(self) -> None:
        run = self._tracker_run()
        for name in self.names:
            kind = self.kinds.get(name)
            try:
                sink = kind()
                remembered = sink.open(TrackerRun(**{**run, "remembered": self.state["trackers"].get(name, {})}))
            except Exception as err:  # noqa: BLE001 - not installed, no network, a bug: never the run's end
                self._drop(name, err, starting=True)
                continue
            self.live[name] = sink
            self.state["trackers"][name] = remembered or {}
        self._write_state()

    def _look(self) -> None:
        """Mirrors what was written since the last look; a folder that cannot be read is logged
        once until its error changes, and looked at again."""
        try:
            records, self._metrics_offset = read_appended(self.folder.metrics_path, self._metrics_offset)
            events, memory_bytes = read_appended(self.folder.memory_path / EVENTS_FILE, self.state["memory_bytes"])
            self._pending += [(iteration, row) for iteration, row in map(_tip_row, events) if row]
            self.state["memory_bytes"] = memory_bytes
            fresh = [
                r for r in records if isinstance(r.get("iteration"), int) and r["iteration"] > self.state["iteration"]
            ]
            for record in fresh:
                self._mirror(record)
            if fresh or events:
                for name in list(self.live):
                    self._call(name, "flush")
                self._write_state()
            self._failure = None
        except Exception as err:  # noqa: BLE001 - a disk error, a folder removed: the next look tries again
            if repr(err) != self._failure:
                self._failure = repr(err)
                log.warning(
                    "the trackers cannot read run %s (%s); looking again every %.0f s",
                    self.folder.run_id,
                    sentence(err),
                    self.interval_s,
                )

    def _mirror(self, record: dict) -> None:
        iteration = record["iteration"]
        env_steps = int(record.get("env_steps", 0))
        tips = [row for at, row in self._pending if at is None or at <= iteration]
        self._pending = [(at, row) for at, row in self._pending if not (at is None or at <= iteration)]
        episodes = self._sampled_episodes(iteration)
        for name in list(self.live):
            self._call(name, "metrics", record, iteration, env_steps)
            if tips or episodes:
                self._call(name, "texts", iteration, tips, episodes)
        self.state["iteration"] = iteration

    def _sampled_episodes(self, iteration: int) -> list[list]:
        """SAMPLED_EPISODES of the iteration's episodes, spread over its groups, as table rows.
        Only the sampled lines are parsed: an iteration's file of a large run holds every prompt's
        token ids, and this thread shares the interpreter with the trainer."""
        try:
            lines = self.folder.trajectory_path(iteration).read_bytes().splitlines()
        except FileNotFoundError:
            return []
        stride = max(1, len(lines) // SAMPLED_EPISODES)
        rows = []
        for ep in (json.loads(line) for line in lines[::stride][:SAMPLED_EPISODES]):
            actions = " → ".join(str(s.get("executed_action") or s.get("action") or "") for s in ep.get("steps", []))
            rows.append(
                [
                    ep.get("id"),
                    ep.get("task"),
                    ep.get("variation"),
                    ep.get("rollout_mode"),
                    ep.get("return"),
                    bool(ep.get("success")),
                    len(ep.get("steps", [])),
                    actions[:ACTIONS_CHARS],
                ]
            )
        return rows

    def _call(self, name: str, method: str, *args) -> None:
        sink = self.live.get(name)
        if sink is None:
            return
        try:
            getattr(sink, method)(*args)
        except Exception as err:  # noqa: BLE001 - a tracker's failure is never the run's
            self._drop(name, err, starting=False)

    def _drop(self, name: str, err: Exception, starting: bool) -> None:
        sink = self.live.pop(name, None)
        if isinstance(err, ImportError):
            why = f"its package is not installed ({err}); pip install -r host/requirements-trackers.lock"
        else:
            why = sentence(err).rstrip(".")
        log.warning(
            "tracker %s %s run %s (training goes on, metrics.jsonl keeps every iteration): %s",
            name,
            "cannot mirror" if starting else "stops mirroring",
            self.folder.run_id,
            why,
        )
        if sink is not None and not starting:
            with contextlib.suppress(Exception):
                sink.close()

    # -- what the trackers are told, and what is remembered ------------------------------------------

    def _tracker_run(self) -> dict:
        """The tracker run's name, folder, config and group; a branch's names its parent and
        checkpoint (its memory log is then read from the end of the copied one)."""
        run_id = self.folder.run_id
        name, group = run_id, run_id
        try:
            parent = json.loads((self.folder.path / PARENT_FILE).read_text())
        except (OSError, ValueError):
            parent = None
        if isinstance(parent, dict) and parent.get("run"):
            name = f"{parent['run']}@{parent.get('checkpoint')} ({run_id})"
            group = str(parent["run"])
            if not self.state["mirrored_before"]:
                self.state["memory_bytes"] = int(parent.get("memory_version") or 0)
        return {"name": name, "folder": self.folder.path, "config": self.folder.config(), "group": group}

    def _read_state(self) -> dict:
        fresh = {"format": FORMAT, "iteration": 0, "memory_bytes": 0, "trackers": {}, "mirrored_before": False}
        try:
            stored = json.loads((self.folder.path / STATE_FILE).read_text())
        except (OSError, ValueError):
            return fresh
        if not isinstance(stored, dict) or stored.get("format") != FORMAT:
            return fresh
        return {**fresh, **stored, "mirrored_before": True}

    def _write_state(self) -> None:
        try:
            atomic_write_json(
                self.folder.path / STATE_FILE, {k: v for k, v in self.state.items() if k != "mirrored_before"}
            )
        except OSError as err:  # a full disk: the trackers go on; a resume may repeat a look
            if repr(err) != self._failure:
                self._failure = repr(err)
                log.warning("cannot record what the trackers of run %s hold (%s)", self.folder.run_id, sentence(err))


def _tip_row(event: dict) -> tuple[int | None, list | None]:
    """(the iteration it belongs to, or None: the one mirrored next; a tips-table row) of a
    memory event: adds, edits and deletes; extends and evictions are not a tip's text changing."""
    kind = event.get("kind")
    if kind == "add" and isinstance(event.get("tip"), dict):
        tip = event["tip"]
        iteration = (tip.get("provenance") or {}).get("iteration")
        return (
            iteration if isinstance(iteration, int) else None,
            [
                tip.get("id"),
                "new",
                tip.get("variation_key"),
                tip.get("author"),
                iteration,
                tip.get("score"),
                tip.get("text"),
            ],
        )
    if kind in ("update", "delete"):
        return None, [
            event.get("tip_id"),
            "edited" if kind == "update" else "deleted",
            event.get("variation_key"),
            event.get("author"),
            None,
            None,
            event.get("text"),
        ]
    return None, None


__all__ = ["mirrored", "TrackerMirror", "STATE_FILE", "LOOK_INTERVAL_S"]
