"""mutmut, with its `only_mutate` narrowed to the files in MUTATION_FILES (space-separated globs
relative to host/, e.g. "empo2/training/update.py empo2/algo/intrinsic.py").

mutmut 3 reads `only_mutate` from host/pyproject.toml and has no command-line option for it; before
it runs one mutant it generates the mutants of every file listed there (minutes on a loaded
machine). Narrowing the list for one run makes a subset fast; the results of earlier runs stay in
host/mutants/*.meta. Runs in host/, arguments as for `mutmut`.

A narrowed run leaves a plain copy of every other source file in host/mutants/, newer than its
source, which mutmut 3 would later take for an up-to-date mutated file (no mutant switched in:
every one of its mutants would survive). Before each run, such plain copies of the files this
run mutates are removed, so mutmut generates them again; verdicts of unchanged functions are
kept from the .meta files. mutmut also forgets which tests reach the functions of files a run
does not mutate (it would then report their mutants as reached by no test), so when the set of
files changes the test statistics are dropped and collected again (about a minute).
"""

import fnmatch
import os
import sys
from pathlib import Path

from mutmut import configuration
from mutmut.__main__ import cli

MUTATED_MARK = "__mutmut_"  # in every mutated copy: the names of its mutants


def drop_plain_copies(patterns: list[str], root: Path = Path(".")) -> list[Path]:
    """Removes mutants/<file> for each source file matching `patterns` whose copy holds no
    mutant; returns the removed paths."""
    removed = []
    for copy in sorted((root / "mutants").rglob("*.py")):
        relative = copy.relative_to(root / "mutants").as_posix()
        if any(fnmatch.fnmatch(relative, p) for p in patterns) and MUTATED_MARK not in copy.read_text(encoding="utf-8"):
            copy.unlink()
            removed.append(copy)
    return removed


def forget_stats_if_the_files_changed(patterns: list[str], root: Path = Path(".")) -> bool:
    """Drops mutants/mutmut-stats.json when this run mutates other files than the last one."""
    record = root / "mutants" / "mutation-files.txt"
    wanted = "\n".join(sorted(patterns))
    changed = not record.exists() or record.read_text(encoding="utf-8") != wanted
    if changed:
        record.parent.mkdir(exist_ok=True)  # the first run: mutmut makes the same folder
        (root / "mutants" / "mutmut-stats.json").unlink(missing_ok=True)
        record.write_text(wanted, encoding="utf-8")
    return changed


if __name__ == "__main__":
    cfg = configuration.config()
    files = os.environ.get("MUTATION_FILES", "").split()
    if files:
        cfg.only_mutate = files
    if sys.argv[1:2] == ["run"]:
        drop_plain_copies(cfg.only_mutate)
        forget_stats_if_the_files_changed(cfg.only_mutate)
    sys.exit(cli())
