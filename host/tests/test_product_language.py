"""scripts/check-product-language.py, which the test command's check tier runs over every tracked
file: what it finds of files outside the repository, and what it leaves alone. (That the
repository passes is the check tier's own run.)"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "check-product-language.py"


@pytest.fixture(scope="module")
def check():
    spec = importlib.util.spec_from_file_location("check_product_language", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def outside(check, name: str, line: str) -> bool:
    held = check.root_names(check.tracked_files())
    return any(
        what == "a file outside the repository"
        for _, what, _ in check.findings(name, line, check.allowed_patterns(), held)
    )


# Split in two (with +, which the formatter keeps) so that this file does not hold what the check finds.
NOTES = "EMPO2" + ".md"


@pytest.mark.parametrize(
    "name, line",
    [
        ("host/empo2/__init__.py", f"The algorithm's specification is ../shared/{NOTES}; the"),
        ("host/empo2/algo/losses.py", f"Follows EMPO² ({NOTES} §3): the loss"),
        ("docs/algorithm.md", "the notes ([spec](../../notes/spec.md))"),
        ("host/empo2/config.py", 'DATA = "/' + 'work/main/data"'),
        ("src/extension.ts", "const cache = '/" + "home/builder/.cache/empo2';"),
        ("scripts/run.sh", "cd /" + "Users/someone/empo2 && ./run"),
        ("README.md", "see /" + "root/notes.md"),
    ],
)
def test_a_reference_to_a_file_outside_the_repository_is_found(check, name, line):
    assert outside(check, name, line)


@pytest.mark.parametrize(
    "name, line",
    [
        ("host/empo2/algo/losses.py", "Follows EMPO² (arXiv 2602.23008, docs/paper.md §3)"),
        ("docs/algorithm.md", "[the bench](bench/r3-update-budget/RESULTS.md), [paper.md](paper.md) §4"),
        ("docs/bench/b3/RESULTS.md", "[README](../README.md) and [the algorithm](../../algorithm.md)"),
        ("test/unit/manifest.unit.test.ts", "const root = path.resolve(__dirname, '../../../..');"),
        ("test/unit/x.unit.test.ts", "path.resolve(__dirname, '../../../../package.json')"),
        ("test/unit/x.unit.test.ts", "path.resolve(__dirname, '../../../../.venv/bin/python')"),
        ("protocol/examples/browse.jsonl", '{"path": "/home/ada/project/.empo2/runs/demo"}'),
    ],
)
def test_paths_inside_the_repository_and_the_examples_invented_user_pass(check, name, line):
    assert not outside(check, name, line)


@pytest.mark.parametrize(
    "line, found",
    [
        ("The bench took two sittings.", True),
        ("measured while the machine was busy with a build", True),
        ("on a machine kept busy by other jobs", True),
        ("- Run A (04:21–05:36, two jobs) ran every mutant", True),
        ("then the survivors named again where time allowed", True),
        ("Two traps met on the way: it copies tests/", True),
        ("on a 2-core AMD EPYC, over four sessions.", True),
        ("paused while a test run had the machine", True),
        ("its results.json is committed at the end of each working session", True),
        ("each debug session replays one episode; two sessions share a checkpoint", False),
        ("A debug session stops at the turn; sitting idle, the host keeps the link.", False),
        ("The step took 0.42 s on 2 cores at load 2 (medians of 5 starts).", False),
        ("`at`: 2026-12-01T08:20:47.403+00:00, the time of the edit", False),
    ],
)
def test_a_page_that_tells_how_the_work_went_is_found(check, line, found):
    what = [w for _, w, _ in check.findings("docs/bench/b9/RESULTS.md", line, check.allowed_patterns())]
    assert ("how the work went" in what) is found
