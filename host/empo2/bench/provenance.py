"""Which warm start a bench run trained from, and on what CPU.

The same recipe built on two CPUs is not the same policy: the build's matrix kernels round
differently on different processors, and ten epochs of imitation carry the difference into
other weights (the large built-in policy's final loss was 0.081 on one 2-core Intel Xeon and
0.111 on an AMD EPYC). A bench resumed on another machine trains its remaining seeds from that
machine's build, so every run records the weights it started from and the CPU it ran on.
"""

from __future__ import annotations

import hashlib
import platform
from pathlib import Path

# The files that hold a policy's weights (transformers' save_pretrained, sharded or not).
WEIGHT_PATTERNS = ("*.safetensors", "*.bin")


def weights_sha256(folder: str | Path) -> str | None:
    """One sha256 over a policy folder's weight files (names and contents, in name order), or
    None where the folder holds none (a name the trainer resolves later, a missing folder)."""
    files = sorted({p for pattern in WEIGHT_PATTERNS for p in Path(folder).glob(pattern) if p.is_file()})
    if not files:
        return None
    digest = hashlib.sha256()
    for path in files:
        digest.update(path.name.encode() + b"\0")
        with path.open("rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
    return digest.hexdigest()


def cpu_model() -> str:
    """The processor's model name as the kernel reports it, else what Python knows."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown"
