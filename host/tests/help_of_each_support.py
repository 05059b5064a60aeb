"""Runs each benchmark script as `python SCRIPT --help` would, one after another in one process,
so that torch and transformers are imported once rather than once a script.

    python help_of_each_support.py BENCH_FOLDER SCRIPT...

Prints {script: [exit status, what it printed]} as JSON on its last line.
"""

from __future__ import annotations

import contextlib
import io
import json
import runpy
import sys
import traceback


def help_of_each(bench: str, scripts: list[str]) -> dict[str, list]:
    sys.path.insert(0, bench)
    seen: dict[str, list] = {}
    for script in scripts:
        sys.argv = [script, "--help"]
        out = io.StringIO()
        try:
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
                runpy.run_path(f"{bench}/{script}", run_name="__main__")
            status = 0
        except SystemExit as exit:
            status = exit.code if isinstance(exit.code, int) else 1
        except BaseException:  # a script that cannot start: its traceback is what it printed
            status, out = 1, io.StringIO(traceback.format_exc())
        seen[script] = [status, out.getvalue()]
    return seen


if __name__ == "__main__":
    print(json.dumps(help_of_each(sys.argv[1], sys.argv[2:])))
