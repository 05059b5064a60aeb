"""`config.check` and `policy.list`: what a client needs to set a run up before starting it (the
extension's New Training Run checks its overrides with the host, and offers the host's models)."""

from __future__ import annotations


async def check(request, params: dict) -> dict:
    """The config run.start would train with these params, or the ConfigInvalid it would answer;
    creates nothing."""
    config, _stem = await request.host.blocking(request.host.runs.config_for_start, params)
    return {"config": config.to_dict()}


async def list_policies(request, params: dict) -> dict:
    from ...policy.choices import policy_choices

    # Off the loop: finding the built-in policy imports torch the first time.
    return {"policies": await request.host.blocking(policy_choices)}
