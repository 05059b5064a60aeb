"""What a process needs of the torchrun job it may belong to, without importing torch (the command
line's entry must stay fast for `runs`, `config` and the sentence of a user's mistake).

torchrun describes the job in the environment; `world_size` is the one reader of WORLD_SIZE.
`leave_rank` is how one process of such a job ends.
"""

from __future__ import annotations

import logging
import os
import sys


def world_size() -> int:
    """The processes torchrun started for this job; 1 outside torchrun (or an empty variable)."""
    return int(os.environ.get("WORLD_SIZE") or 1)


def leave_rank(code: int) -> None:
    """Ends one process of a torchrun job whose outcome is decided: its results written, its
    sentence printed. A normal interpreter exit would run the C++ destructors of
    torch.distributed's objects in no set order, and a rank that meets a still-joinable thread
    there aborts ("terminate called without an active exception", exit -6), which fails the whole
    job after the fact and hides the rank's own outcome: seen after a resumed sharded run on a
    loaded two-core machine, and in PyTorch's own FSDP tests. Flushed first, so nothing printed or
    logged is lost."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # the launcher has gone; nothing left to say it to
            pass
    logging.shutdown()
    os._exit(code)
