"""`checkpoint.list`: the run's complete checkpoints (a folder without trainer.json is not one)."""

from __future__ import annotations

from ..runs.stored_run import checkpoints


async def list_checkpoints(request, params: dict) -> dict:
    host = request.host
    folder = host.runs.folder(params["runId"])
    return {"checkpoints": await host.blocking(checkpoints, folder)}
