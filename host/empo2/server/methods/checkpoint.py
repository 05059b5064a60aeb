"""`checkpoint.list`: the run's complete checkpoints (a folder without trainer.json is not one)."""

from __future__ import annotations


async def list_checkpoints(request, params: dict) -> dict:
    host, runs = request.host, request.host.runs
    folder = runs.folder(params["runId"])
    return {"checkpoints": await host.blocking(runs.checkpoints, folder)}
