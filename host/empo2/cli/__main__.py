"""`python -m empo2.cli`: the command line (torchrun starts the host this way)."""

import sys

from . import main

sys.exit(main())
