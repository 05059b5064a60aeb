"""The host's CPU thread pools, set up before torch and numpy load, so that training on a machine
whose cores other work keeps busy slows by the share of the cores it loses, not tenfold.

torch ships GNU OpenMP: a thread that waits for the rest of its team (at the end of every parallel
matrix product) spins for up to ~300,000 rounds before it sleeps. On an idle machine that saves a
wake-up; on a busy one the spinning thread burns the time slice the thread it waits for needs,
and the scheduler, which favours threads that sleep, puts both behind the other work. Measured on
a 2-core machine with other jobs running (load 8-11), the sentence embedder on 60 texts, torch's
default 2 threads: 110 s and 17 s of CPU spinning (default wait policy) against 4-10 s and 1.3 s
of CPU (passive wait policy), and 5-16 s with one thread. The first metrics line of the built-in
run came after 719 s with spinning threads and after 129-146 s without, on that machine
(docs/extension.md has the whole measurement).

So the host asks OpenMP to wait passively (the team keeps torch's default size, one thread per
core: no oversubscription by itself, and still the fastest on a quiet machine), and numpy's
OpenBLAS, which spins likewise and whose products here are small (retrieval, novelty), to use
one thread. A value the environment already sets is kept: a person who tunes them knows their
machine. The tokenizers' own pool was measured too and left alone (no difference under load).
"""

from __future__ import annotations

import os
from collections.abc import MutableMapping

# Read once, when the libraries load: `configure` must run before torch or numpy is imported.
THREAD_ENV = {
    "OMP_WAIT_POLICY": "PASSIVE",  # torch's OpenMP (and MKL, oneDNN inside it): sleep while waiting
    "OPENBLAS_NUM_THREADS": "1",  # numpy's BLAS: its small products need no team
}


def configure(environ: MutableMapping[str, str] = os.environ) -> None:
    """Sets the thread pools' environment for this process and the processes it starts (a
    torchrun rank, a benchmark's host), keeping any value already set."""
    for name, value in THREAD_ENV.items():
        environ.setdefault(name, value)
