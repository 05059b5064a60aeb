"""Where the host keeps what it builds or downloads once and reuses: built policies
(`policies/`), converted packaged models, generated TextWorld games (`textworld/`).
$EMPO2_CACHE_DIR, default ~/.cache/empo2. Torch-free, so a world can ask without loading a model."""

from __future__ import annotations

import os
from pathlib import Path


def cache_root() -> Path:
    return Path(os.environ.get("EMPO2_CACHE_DIR", Path.home() / ".cache" / "empo2"))
