#!/usr/bin/env python3
"""The repository speaks of the product, not of how it was built (a doc says what the product
does, never who did what when), and of nothing outside itself.

Scans every tracked file (text only; package-lock.json and the generated protocol types are
skipped) for:

- numbered work periods ("session 12", "sessions 6-8"; in prose also "this session", "the
  session's machine", "two sittings", a time-of-day span "04:21–05:36", remarks on the machine's
  day: "while the machine was busy", "kept busy by", "where time allowed") and issue numbers
  ("issue 9", "issue #9", ISSUE_4_...);
- people who built it: helpers in prose, "the lead", "this workplace";
- absolute paths of a build machine (/tmp/, /root/, /work/, /home/ but /home/ada/, the invented
  user of the examples) in docs, markdown, test fixtures and recorded transcripts;
- references to a file outside the repository, in every file: a machine's own folders (/work/,
  /root/, /home/<user>/ but /home/ada/, /Users/<user>/), a document that is not in the repository
  (EMPO2.md: the algorithm's specification is docs/paper.md), and a relative path that climbs
  above the repository's root from the file that names it to something the root does not hold
  (a built test's `path.resolve(__dirname, '../../../../package.json')` names the root's own).

A legitimate use (a debug session, `InferenceSession`, "test helpers") is listed in
scripts/product-language-allow.txt: one regular expression per line, matched case-insensitively
against the line; a finding inside such a match is allowed.

    python3 scripts/check-product-language.py          # exit 1 and file:line: text per finding
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ALLOW_FILE = ROOT / "scripts" / "product-language-allow.txt"
SKIP = re.compile(
    r"^(package-lock\.json|src/rpc/generated/|scripts/check-product-language\.py$"
    r"|scripts/product-language-allow\.txt$)"
)

EVERYWHERE = [
    ("a numbered work period", re.compile(r"\bsessions? ?#?[0-9]+", re.I)),
    ("an issue number", re.compile(r"\bissues? #?[0-9]+|\bissue_[0-9]+", re.I)),
    (
        "the people who built it",
        re.compile(
            r"\bthe lead\b|\bthis workplace\b"
            r"|\bhelpers?(?: sessions?| agents?| engineers?|'s?\b)",
            re.I,
        ),
    ),
]
# Prose and recorded data: here a helper is a person, and a machine path is the build machine's.
PROSE = re.compile(r"(\.md|\.txt|\.jsonl|\.rst)$|^docs/|^test/fixtures/|^protocol/examples/")
IN_PROSE = [
    ("a helper (a person)", re.compile(r"\bhelpers?\b", re.I)),
    ("a work period", re.compile(r"\b(?:this|next|previous) session\b|\bthe session's (?:machine|time)\b", re.I)),
    (
        "how the work went",
        re.compile(
            r"\b(?:this|one|two|three|several|many|more|other|earlier|later|[0-9]+) sittings?\b"
            r"|\b(?:while|when) the machine (?:was|had)\b|\bthe machine was (?:busy|shared|free|quiet|idle)\b"
            r"|\bkept busy by\b|\bwhat else (?:had|ran on|was on) the machine\b|\bwhere time allowed\b"
            r"|\bran out of time\b|\bmet on the way\b|\bhad the machine\b|\bworking sessions?\b"
            r"|\b(?:over|in|across) (?:two|three|four|five|several|many|[0-9]+) sessions\b"
            r"|\b[0-2]?[0-9]:[0-5][0-9][–-][0-2]?[0-9]:[0-5][0-9]\b",
            re.I,
        ),
    ),
    ("a build machine's path", re.compile(r"(?<![\w.~/-])/(?:tmp|root|work|home(?!/ada/))/")),
]

OUTSIDE = [
    (
        "a file outside the repository",
        re.compile(r"(?<![\w.~/-])/(?:work|root|home/(?!ada/)[\w.-]+|Users/[\w.-]+)/|\bEMPO2\.md\b"),
    ),
]
CLIMB = re.compile(r"(?<![\w.])((?:\.\./)+)([\w.@-]*)")


def root_names(files: list[str]) -> set[str]:
    """What the root holds: its tracked top-level entries, and those its own tools make there
    (the top-level names .gitignore lists: .venv, node_modules, out, ...)."""
    ignore = ROOT / ".gitignore"
    made = ignore.read_text(encoding="utf-8").splitlines() if ignore.exists() else []
    return {f.split("/", 1)[0] for f in files} | {m.strip("/") for m in made if re.fullmatch(r"/?[\w.-]+/?", m)}


def climbs_out(name: str, line: str, held: set[str]):
    """The relative paths of `line` (in the file `name`) that leave the repository's root and name
    something the root does not hold (`held`, root_names)."""
    depth = len(Path(name).parent.parts)
    for hit in CLIMB.finditer(line):
        ups, first = hit.group(1).count("../"), hit.group(2)
        if ups > depth and first.strip(".") and first not in held:  # a bare `..` names no file
            yield hit


def tracked_files() -> list[str]:
    out = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        check=True,
        capture_output=True,
    ).stdout
    return sorted({f for f in out.decode().split("\0") if f and not SKIP.match(f)})


def text_of(path: Path) -> str | None:
    try:
        data = path.read_bytes()
    except (FileNotFoundError, IsADirectoryError):  # removed in the working tree, or a submodule
        return None
    if b"\0" in data[:8192]:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def allowed_patterns() -> list[re.Pattern]:
    lines = ALLOW_FILE.read_text(encoding="utf-8").splitlines() if ALLOW_FILE.exists() else []
    return [re.compile(line, re.I) for line in lines if line.strip() and not line.startswith("#")]


def findings(name: str, text: str, allow: list[re.Pattern], held: set[str] = frozenset()):
    rules = EVERYWHERE + OUTSIDE + (IN_PROSE if PROSE.search(name) else [])
    for number, line in enumerate(text.splitlines(), 1):
        hits = [(what, hit) for what, rule in rules for hit in rule.finditer(line)]
        hits += [("a file outside the repository", hit) for hit in climbs_out(name, line, held)]
        for what, hit in hits:
            if not any(
                a.start() <= hit.start() and hit.end() <= a.end() for pattern in allow for a in pattern.finditer(line)
            ):
                yield number, what, line.strip()


def main() -> int:
    allow = allowed_patterns()
    bad = 0
    files = tracked_files()
    held = root_names(files)
    for name in files:
        text = text_of(ROOT / name)
        if text is None:
            continue
        for number, what, line in findings(name, text, allow, held):
            bad += 1
            shown = line if len(line) <= 160 else line[:157] + "..."
            print(f"{name}:{number}: {shown}  [{what}]")
    if bad:
        print(
            f"{bad} line(s) speak of how the product was built, not of the product "
            f"(allowed uses: {ALLOW_FILE.relative_to(ROOT)})",
            file=sys.stderr,
        )
        return 1
    print(f"product language: OK ({len(files)} files)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
