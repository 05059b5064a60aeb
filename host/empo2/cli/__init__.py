"""`empo2-host`: the training host's command line.

    empo2-host build-policy                      build (or find) the cached built-in policy
    empo2-host build-policy --model NAME         convert a packaged model (smollm2-135m-instruct)
    empo2-host train [--preset builtin] [k=v ..] train; overrides like algo.p_memory=0
    empo2-host config [--preset builtin] [k=v ..] print the resolved config (a file train --config reads)
    empo2-host resume RUN_FOLDER                 continue a run from its last checkpoint
    empo2-host runs [--state interrupted]        the run folders under .empo2/runs and their state
    empo2-host envs [--json]                     the environments env.name can name, with their tasks
    empo2-host eval --run RUN_FOLDER             memory-free and memory-augmented success
    empo2-host bench [--seeds 0,1,2,3,4]          EMPO² vs the paper's GRPO on the built-in worlds
    empo2-host rerun RUN [--dry-run] [..]         rerun the off-policy update on a branch (rerun/runner.py)
    empo2-host branch create|adopt|delete|list RUN  branch runs (rerun/branch.py)
    empo2-host export-onnx SOURCE [--out DIR]     a policy as ONNX for local scoring (export/onnx.py)
    empo2-host serve [--port 0] [--run-root DIR]  the JSON-RPC host for EMPO² Studio (protocol/)
    empo2-host serve-env ENV [--port 0]           an environment as an OpenEnv server (envs/openenv_server.py)

A user's mistake (a bad config, a missing file or model) prints one sentence and exits with 2;
progress bars and logs go to stderr, results to stdout.
"""

from __future__ import annotations

import logging
import os
import sys
import traceback

from .. import cpu_threads
from ..one_sentence import sentence
from ..torchrun import leave_rank, world_size
from .commands import COMMANDS
from .errors import EXIT_USAGE, is_user_error
from .parser import build_parser


def main(argv: list[str] | None = None) -> int:
    cpu_threads.configure()  # before anything loads torch or numpy (cpu_threads.py says why)
    code = _run(argv)
    if world_size() > 1:
        leave_rank(code)
    return code


def _run(argv: list[str] | None) -> int:
    parser = build_parser(__doc__.split("\n\n")[0])
    args = parser.parse_args(argv)
    if not getattr(args, "command", None):
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    logging.basicConfig(
        level=os.environ.get("EMPO2_LOG_LEVEL", "WARNING"),
        stream=sys.stderr,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    try:
        return COMMANDS[args.command](args) or 0
    except KeyboardInterrupt:
        print("empo2-host: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # `empo2-host runs | head`: the reader has what it wanted
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # no second error at exit
        return 141
    except Exception as err:  # noqa: BLE001 - the one place errors become sentences
        if is_user_error(err):
            print(f"empo2-host: error: {sentence(err)}", file=sys.stderr)
            return EXIT_USAGE
        if os.environ.get("EMPO2_DEBUG"):
            traceback.print_exc()
        print(f"empo2-host: internal error: {sentence(err)} (set EMPO2_DEBUG=1 for details)", file=sys.stderr)
        return 1
