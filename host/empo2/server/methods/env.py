"""`env.list`: the environments a run's `env.name` can name on this host (envs/registry.py),
as `empo2-host envs` lists them."""

from __future__ import annotations


async def list_environments(request, params: dict) -> dict:
    from ...envs.registry import list_environments as installed  # imports no torch

    # Off the loop: an entry point's environment is made to ask for its tasks.
    return {"environments": await request.host.blocking(installed)}
