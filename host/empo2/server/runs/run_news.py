"""What a run's trainer wrote to its folder since the last read, as the protocol's notifications:
the one reader of a run's news, for the host's own run (nudged by its trainer) and for the runs
other processes train (looked at every few tenths of a second, followed_runs.py).

The trainer writes first and tells after: progress.json (`run/progress`), each episode of the
iteration in progress as it ends (ended-episodes.jsonl: `trajectory/progress`), the written
iteration's summaries (trajectories/index.jsonl: `trajectory/added`) and its metrics line
(metrics.jsonl: `run/metrics`). Read in that order, so an iteration's episodes come before the
iteration, and the iteration before its metrics. Only whole lines are read: a line being written
waits for the next read; a file cut back (a resume rolled the run back) is read on from its end.
"""

from __future__ import annotations

from pathlib import Path

from ...atomic import intact_length, read_appended
from ...run_folder.folder import RunFolder


class RunNews:
    """The read position in one run folder's files, and what came since."""

    def __init__(self, run_id: str, folder: RunFolder):
        self.run_id = run_id
        self.folder = folder
        # From the files' ends as they are now: what came before is history, which requests
        # read; the iteration in progress's ended episodes are news (no request lists them).
        self.metrics = _whole_lines(folder.metrics_path)
        self.index = _whole_lines(folder.index_path)
        self.progress: tuple[int, int, int] | None = None  # progress.json's stamp when last read
        self.ended_file: int | None = None  # ended-episodes.jsonl's inode when last read
        self.ended_offset = 0
        self.ended_last = (0, 0)  # (iteration, done) of the last ended episode told

    def read(self) -> list[tuple[str, dict]]:
        """The notifications for what the trainer wrote since the last read (blocking I/O)."""
        news = self._progressed()
        news += self._episodes_ended()
        summaries, self.index = read_appended(self.folder.index_path, self.index)
        if summaries:
            news.append(("trajectory/added", {"runId": self.run_id, "summaries": summaries}))
        records, self.metrics = read_appended(self.folder.metrics_path, self.metrics)
        if records:
            news.append(("run/metrics", {"runId": self.run_id, "records": records}))
        return news

    def _progressed(self) -> list[tuple[str, dict]]:
        """run/progress when the trainer has written a new progress.json since the last read."""
        stamp = file_stamp(self.folder.progress_path)
        if stamp == self.progress:
            return []
        self.progress = stamp
        progress = self.folder.progress()
        return [("run/progress", {"runId": self.run_id, "progress": progress})] if progress else []

    def _episodes_ended(self) -> list[tuple[str, dict]]:
        """trajectory/progress for the episodes that ended since the last read. Each iteration's
        file is a new one; a file's inode number may come back after it was dropped, so the
        episodes' own (iteration, done) decide what is new: a read that does not go on from the
        last episode told reads the file again from its start."""
        path = self.folder.ended_episodes_path
        try:
            st = path.stat()
        except OSError:
            self.ended_file, self.ended_offset = None, 0
            return []
        same = st.st_ino == self.ended_file and st.st_size >= self.ended_offset
        offset = self.ended_offset if same else 0
        inode = st.st_ino
        entries, end = read_appended(path, offset)
        if offset and entries and _order(entries[0]) != (self.ended_last[0], self.ended_last[1] + 1):
            entries, end = read_appended(path, 0)
        self.ended_file, self.ended_offset = inode, end
        by_iteration: dict[int, dict] = {}
        for entry in entries:
            if _order(entry) <= self.ended_last:
                continue
            self.ended_last = _order(entry)
            iteration = entry["iteration"]
            event = by_iteration.setdefault(
                iteration,
                {"runId": self.run_id, "iteration": iteration, "done": 0, "total": 0, "summaries": []},
            )
            event["done"] = max(event["done"], entry.get("done", 0))
            event["total"] = entry.get("total", 0)
            event["summaries"].append(entry.get("summary"))
        return [("trajectory/progress", event) for event in by_iteration.values()]


def _order(entry: dict) -> tuple[int, int]:
    """Where an ended episode stands in its run: (iteration, done), both counting up."""
    iteration, done = entry.get("iteration"), entry.get("done")
    if type(iteration) is not int or type(done) is not int:
        return (0, 0)  # not one the trainer wrote: never new
    return (iteration, done)


def file_stamp(path: Path) -> tuple[int, int, int] | None:
    """What changes whenever a file is rewritten (an atomic write is a new inode); None if absent."""
    try:
        st = path.stat()
    except OSError:
        return None
    return st.st_ino, st.st_mtime_ns, st.st_size


def _whole_lines(path: Path) -> int:
    """Bytes of the file's whole lines now (a line being written is left to the next read)."""
    try:
        return intact_length(path)
    except FileNotFoundError:
        return 0


__all__ = ["RunNews"]
