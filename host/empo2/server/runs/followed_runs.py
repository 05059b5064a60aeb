"""Runs that another process trains, followed from their files, so clients see them live.

A run trained by `empo2-host train` in a terminal, or by the host of another window on the same
folder, is written by that process; this host only reads it. Every `follow_interval_s` it looks
at each run folder in its roots whose run.json says active while another process holds its writer
lock, and publishes what that process wrote since the last look (run_news.py, the same reader
the host's own run is told through: `run/progress`, `trajectory/progress`, `trajectory/added`,
`run/metrics`), the tips changed in a memory a client has read (`memory/changed`), and its state
and iteration when they change (`run/state`). A run first seen active is followed from the
files' ends as they are then (what came before is history, for the requests that read it),
except the episodes of its iteration in progress, which no request lists; a run that stops being
active (finished, stopped, interrupted by a kill) gets its last lines and its state, and is no
longer followed.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from pathlib import Path

from ...run_folder.folder import RunFolder
from .run_news import RunNews, file_stamp
from .stored_run import ACTIVE, stored_state

log = logging.getLogger("empo2.server.followed")


@dataclass
class _Followed:
    news: RunNews  # where its files were read to
    seen: tuple[str, int]  # the state and iteration last published

    @property
    def run_id(self) -> str:
        return self.news.run_id


class FollowedRuns:
    """The host's follower of the runs in its roots that other processes train (one per host)."""

    def __init__(self, runs, hub, blocking, interval_s: float):
        self.runs = runs
        self.hub = hub
        self.blocking = blocking
        self.interval_s = interval_s
        self._followed: dict[Path, _Followed] = {}
        # run.json's identity (inode, mtime, size) of each folder last seen not active: such a
        # folder is not read again until run.json is rewritten, which a writer starting does first.
        self._quiet: dict[Path, tuple[int, int, int]] = {}
        self._failure: str | None = None  # the last look's error, logged once until it changes
        self._unreadable: dict[Path, str] = {}  # a folder's last error, logged once until it changes

    async def run(self) -> None:
        """Looks every interval until cancelled; a failed look is logged and the next one comes."""
        while True:
            try:
                await self.look()
                self._failure = None
            except asyncio.CancelledError:
                raise
            except Exception as err:  # a folder removed mid-read, a disk error: never the host's end
                if repr(err) != self._failure:
                    self._failure = repr(err)
                    log.exception(
                        "following runs of other processes failed; trying again every %.0f s", self.interval_s
                    )
            await asyncio.sleep(self.interval_s)

    async def look(self) -> None:
        """One look at every run folder: publishes what other processes wrote since the last."""
        news, looked, ended = await self.blocking(self._read)
        live = self.runs.live
        for method, params in news:
            # A run this host began training while the look read its folder is its own now.
            if live is None or live.run_id != params.get("runId", params.get("run", {}).get("runId")):
                self.hub.publish(method, params)
        for run_id, folder in looked:
            await self.runs.memory.follow(run_id, folder)
        for _, folder in ended:
            await self.runs.memory.unfollow(folder)

    def _read(self) -> tuple[list[tuple[str, dict]], list[tuple[str, RunFolder]], list[tuple[str, RunFolder]]]:
        """Worker thread: the notifications to publish, the runs looked at (run id, folder), and
        those of them no longer followed. A folder that cannot be read is logged (once until its
        error changes) and left to the next look; the others are followed all the same."""
        live = self.runs.live
        live_path = live.folder.path.resolve() if live is not None else None
        news: list[tuple[str, dict]] = []
        looked: list[tuple[str, RunFolder]] = []
        ended: list[tuple[str, RunFolder]] = []
        listed: set[Path] = set()
        for folder in self.runs.run_folders():
            listed.add(folder.path)
            if folder.path.resolve() == live_path:
                self._followed.pop(folder.path, None)  # this host trains it: its hooks tell
                continue
            try:
                self._look_at(folder, news, looked, ended)
                self._unreadable.pop(folder.path, None)
            except (OSError, ValueError) as err:  # a damaged run.json, a folder being removed
                if self._unreadable.get(folder.path) != repr(err):
                    self._unreadable[folder.path] = repr(err)
                    log.warning(
                        "cannot follow run folder %s (%s); looking again every %.0f s",
                        folder.path,
                        err,
                        self.interval_s,
                    )
        self._forget_unlisted(listed, ended)
        return news, looked, ended

    def _forget_unlisted(self, listed: set[Path], ended: list) -> None:
        """A folder gone from the roots (removed, or its root closed) is forgotten: a run followed
        there ends as one that stopped being active, and nothing of it is kept."""
        for path in [p for p in self._followed if p not in listed]:
            ended.append((self._followed.pop(path).run_id, RunFolder(path)))
        for kept in (self._quiet, self._unreadable):
            for path in [p for p in kept if p not in listed]:
                del kept[path]

    def _look_at(self, folder: RunFolder, news: list, looked: list, ended: list) -> None:
        followed = self._followed.get(folder.path)
        stamp = file_stamp(folder.path / "run.json")
        if followed is None and stamp is not None and self._quiet.get(folder.path) == stamp:
            return
        self._quiet.pop(folder.path, None)
        stored = folder.state()
        state = stored_state(folder, stored)
        active = state in ACTIVE
        if active and folder.written_here():
            # Not the live run but this process's: a rerun beside a paused run writes its
            # branch in a thread of its own (update/progress tells of it).
            self._followed.pop(folder.path, None)
            return
        if followed is None:
            if active:
                self._followed[folder.path] = self._start(folder, stored, state, news)
            elif stamp is not None:
                self._quiet[folder.path] = stamp
            return
        news += followed.news.read()
        info = self.runs.info(folder, stored, state)
        if (info["state"], info["iteration"]) != followed.seen:
            followed.seen = (info["state"], info["iteration"])
            news.append(("run/state", {"run": info}))
        looked.append((followed.run_id, folder))
        if not active:
            del self._followed[folder.path]
            ended.append((followed.run_id, folder))

    def _start(self, folder: RunFolder, stored: dict, state: str, news: list) -> _Followed:
        info = self.runs.info(folder, stored, state)
        news.append(("run/state", {"run": info}))  # a run started elsewhere shows up now
        followed = _Followed(RunNews(info["runId"], folder), (info["state"], info["iteration"]))
        news += followed.news.read()  # where it is, and its iteration so far
        return followed


__all__ = ["FollowedRuns"]
