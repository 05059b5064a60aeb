"""What a host is started with; importing this stays light (no torch), so the command line can
check a user's mistakes in a fraction of a second before loading anything heavy."""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass, field
from pathlib import Path

from .transport.connection import Limits


@dataclass
class Settings:
    host: str = "127.0.0.1"
    """Interface to bind; anything but loopback needs `allow_remote`."""
    port: int = 0
    """0 picks a free port (the ready line says which)."""
    token: str | None = None
    """Required as `Authorization: Bearer <token>`; None only for --insecure-no-token."""
    roots: list[Path] = field(default_factory=lambda: [Path(".empo2/runs")])
    """Run roots: where runs are created and the only folders `run.open` may reach."""
    allow_remote: bool = False
    """Permit a non-loopback `host` (the user was warned)."""
    limits: Limits = field(default_factory=Limits)
    """Per-connection limits (frame size, rate, queues)."""
    shutdown_grace_s: float = 30.0
    """How long `shutdown` waits for the live run to reach its next iteration boundary."""
    follow_interval_s: float = 0.5
    """How often runs that another process trains are looked at for what they wrote since
    (followed_runs.py): an episode's row then shows within a second of its end, as the host's
    own run's does (host/benchmarks/episode_latency.py)."""
    handler_threads: int = 4
    """Threads for handlers' blocking work (disk, memory store), off the event loop."""
    embedder_factory: object = None
    """() -> SentenceEmbedder shared by runs and tip edits; default: the real one, made once."""


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


__all__ = ["Settings", "Limits", "is_loopback"]
