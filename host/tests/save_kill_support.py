"""Run by torchrun from test_sharding.py: `empo2.cli` whose sharded save stops at a known point,
so that the test can `kill -9` the ranks while a checkpoint is half written.

    EMPO2_TEST_PAUSE_DIR=DIR EMPO2_TEST_PAUSE_AT=iter-000002 \
        torchrun --standalone --nproc_per_node 2 tests/save_kill_support.py train ...

Every rank writes its pid to DIR/pid-RANK first. The save itself is the real one
(torch.distributed.checkpoint through empo2.training.sharding); only its last step is held back: when
rank 0, DCP's coordinator, is about to write `.metadata` for the checkpoint named PAUSE_AT (every
rank's shard files are written by then), it writes DIR/paused and sleeps until it is killed; the
other ranks wait for it inside DCP's collectives.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

from torch.distributed.checkpoint import filesystem

from empo2.cli import main

PAUSE_DIR = Path(os.environ["EMPO2_TEST_PAUSE_DIR"])
PAUSE_AT = os.environ["EMPO2_TEST_PAUSE_AT"]


def _finish_after_a_pause(self, metadata, results):
    if PAUSE_AT in str(self.path):
        (PAUSE_DIR / "paused").write_text(str(self.path))
        while True:  # until kill -9
            time.sleep(1)
    return _real_finish(self, metadata, results)


_real_finish = filesystem._FileSystemWriter.finish
filesystem._FileSystemWriter.finish = _finish_after_a_pause

if __name__ == "__main__":
    (PAUSE_DIR / f"pid-{os.environ.get('RANK', '0')}").write_text(str(os.getpid()))
    sys.exit(main(sys.argv[1:]))
