"""Summarises a mutation run per module into a Markdown report (scripts/mutation.sh calls it).

    python scripts/mutation_report.py --mutmut host-results.txt --stryker stryker.json \\
        --equivalent scripts/mutation-equivalent.txt [--by-function] > report.md

mutmut's `results --all true` lists `<module>.<function>__mutmut_<n>: <status>`; Stryker's JSON
report lists every mutant per file (named here `file:line:column-line:column:Mutator:replacement`).
Mutants named in the equivalent list (one per line, `name  # reason`) are counted apart: they
cannot be killed because they do not change behaviour, and the reason says why.
Score = killed / (total − equivalent − not run), timeouts counted as killed.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import sys
from collections import defaultdict
from pathlib import Path

KILLED = {"killed", "timeout", "Killed", "Timeout"}
# Not run, or no verdict: left out of the score. A mutant no test reaches ("no tests",
# Stryker's "NoCoverage") is a survivor, as both tools score it.
NOT_RUN = {
    "not checked",
    "skipped",
    "Ignored",
    "CompileError",
    "RuntimeError",
    "check was interrupted by user",
    "segfault",
    "suspicious",
}


def read_equivalent(path: Path | None) -> dict[str, str]:
    if path is None or not path.exists():
        return {}
    out = {}
    for line in path.read_text().splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            name, _, reason = line.partition("#")
            out[name.strip()] = reason.strip()
    return out


def mutmut_rows(path: Path, by_function: bool = False) -> list[tuple[str, str, str]]:
    """(module, mutant, status) from `mutmut results --all true`; with by_function the first
    field is the mutated function (`empo2.training.update.x_build_samples`) instead of its module."""
    rows = []
    for line in path.read_text().splitlines():
        m = re.match(r"\s*(\S+__mutmut_\d+):\s*(.+)$", line)
        if not m:
            continue
        name, status = m.group(1), m.group(2).strip()
        module = name.rsplit("__mutmut_", 1)[0] if by_function else re.split(r"\.(?:x_|xǁ)", name, maxsplit=1)[0]
        rows.append((module, name, status))
    return rows


def stryker_name(file: str, mutant: dict) -> str:
    """`file:line:column-line:column:Mutator:replacement`, the span of the code replaced, e.g.
    `src/rpc/client.ts:152:9-152:36:ConditionalExpression:false`. Stryker's own ids number the
    mutants of the whole run, so they change with `--mutate` or an edit to an earlier file; the
    span, the mutator and the replacement do not (the end tells nested conditions that start at
    one column apart). The replacement is put on one line; past 60 characters it is cut at 48
    and ends with 8 hex digits of its SHA-1 (two long replacements of one span can share their
    start); a `#` in it (the equivalent list's comment mark) is written %23."""
    location = mutant.get("location", {})
    start, end = location.get("start", {}), location.get("end", {})
    span = f"{start.get('line', '?')}:{start.get('column', '?')}-{end.get('line', '?')}:{end.get('column', '?')}"
    replacement = " ".join(str(mutant.get("replacement", "")).split()).replace("#", "%23")
    if len(replacement) > 60:
        digest = hashlib.sha1(replacement.encode()).hexdigest()[:8]
        replacement = f"{replacement[:48]}…{digest}"
    return f"{file}:{span}:{mutant.get('mutatorName')}:{replacement}"


def stryker_rows(path: Path) -> list[tuple[str, str, str]]:
    report = json.loads(path.read_text())
    rows = []
    for file, entry in report.get("files", {}).items():
        for mutant in entry.get("mutants", []):
            rows.append((file, stryker_name(file, mutant), mutant.get("status", "?")))
    return rows


def table(rows: list[tuple[str, str, str]], equivalent: dict[str, str]) -> list[str]:
    by_module: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    survivors: dict[str, list[str]] = defaultdict(list)
    for module, name, status in rows:
        counts = by_module[module]
        counts["total"] += 1
        if name in equivalent:
            counts["equivalent"] += 1
        elif status in KILLED:
            counts["killed"] += 1
        elif status in NOT_RUN:
            counts["not run"] += 1
        else:
            counts["survived"] += 1
            survivors[module].append(name)
    lines = ["| module | killed / scored | score | survived | equivalent | not run |", "|---|---|---|---|---|---|"]
    for module in sorted(by_module):
        c = by_module[module]
        scored = c["total"] - c["equivalent"] - c["not run"]
        score = f"{100 * c['killed'] / scored:.1f}%" if scored else "–"
        lines.append(
            f"| {module} | {c['killed']} / {scored} | {score} | {c['survived']} | {c['equivalent']} | {c['not run']} |"
        )
    for module in sorted(survivors):
        lines.append(f"\nSurvivors in {module}: " + ", ".join(f"`{n}`" for n in survivors[module]))
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mutmut", type=Path)
    parser.add_argument("--stryker", type=Path)
    parser.add_argument("--equivalent", type=Path)
    parser.add_argument(
        "--by-function", action="store_true", help="one host row per mutated function instead of per module"
    )
    args = parser.parse_args(argv)
    equivalent = read_equivalent(args.equivalent)
    out = ["# Mutation report", ""]
    if args.mutmut and args.mutmut.exists():
        out += ["## Host (mutmut)", ""] + table(mutmut_rows(args.mutmut, args.by_function), equivalent) + [""]
    if args.stryker and args.stryker.exists():
        out += ["## Extension (StrykerJS)", ""] + table(stryker_rows(args.stryker), equivalent) + [""]
    if equivalent:
        out += ["## Equivalent mutants (excluded from the score)", ""]
        out += [f"- `{name}`: {reason}" for name, reason in sorted(equivalent.items())]
    print("\n".join(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
