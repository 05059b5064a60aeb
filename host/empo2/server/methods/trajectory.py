"""`trajectory.list` (summaries, filtered, paged) and `trajectory.get` (one episode in full, or
while its iteration trains, as it was when it ended)."""

from __future__ import annotations

from ..transport.protocol import ProtocolError

DEFAULT_LIMIT = 100

# filter field → test of one summary; one entry per filter in the schema's TrajectoryFilter.
FILTERS = {
    "iteration": lambda s, v: s.get("iteration") == v,
    "iterationMin": lambda s, v: _number(s.get("iteration")) >= v,
    "iterationMax": lambda s, v: _number(s.get("iteration")) <= v,
    "task": lambda s, v: s.get("task") == v,
    "variation": lambda s, v: s.get("variation") == v,
    "rolloutMode": lambda s, v: s.get("rollout_mode") == v,
    "updateMode": lambda s, v: s.get("update_mode") == v,
    "returnMin": lambda s, v: _number(s.get("return")) >= v,
    "returnMax": lambda s, v: _number(s.get("return")) <= v,
    "success": lambda s, v: s.get("success") is v,
}


def _number(value) -> float:
    return value if isinstance(value, (int, float)) and not isinstance(value, bool) else float("nan")


def decode_cursor(cursor: str | None) -> int:
    """Cursors are `o<offset>` into the filtered list; the index only grows, so they stay valid."""
    if cursor is None:
        return 0
    if len(cursor) < 2 or cursor[0] != "o" or not cursor[1:].isdigit() or len(cursor) > 12:
        raise ProtocolError(
            "InvalidParams", "params.cursor is not a cursor this host issued.", {"field": "params.cursor"}
        )
    return int(cursor[1:])


def page(items: list, cursor: str | None, limit: int | None) -> dict:
    start = decode_cursor(cursor)
    limit = limit or DEFAULT_LIMIT
    chunk = items[start : start + limit]
    end = start + len(chunk)
    return {"items": chunk, "nextCursor": f"o{end}" if end < len(items) else None, "total": len(items)}


async def list_trajectories(request, params: dict) -> dict:
    host, runs = request.host, request.host.runs
    folder = runs.folder(params["runId"])
    conditions = [(FILTERS[k], v) for k, v in params.get("filter", {}).items()]

    def matching():
        return [s for s in runs.summaries(folder) if all(test(s, v) for test, v in conditions)]

    return page(await host.blocking(matching), params.get("cursor"), params.get("limit"))


async def get_trajectory(request, params: dict) -> dict:
    host, runs = request.host, request.host.runs
    folder = runs.folder(params["runId"])
    # An episode of the iteration still training first: its trainer drops the ended episodes
    # only once it has written their records, so one missing here is found written below.
    ended = await host.blocking(runs.ended_episode, folder, params["episodeId"])
    if ended is not None:
        return {"episode": ended, "provisional": True}
    episode = await host.blocking(folder.trajectory, params["episodeId"])
    if episode is None:
        raise ProtocolError("EpisodeNotFound", f"no episode {params['episodeId']} in run '{params['runId']}'.")
    return {"episode": episode}
