"""The lock file (requirements.lock) is the environment a fresh clone installs: every package it
names carries hashes, and every pin of pyproject.toml is in it at the same version."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

HOST = Path(__file__).resolve().parents[1]


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def locked(lock: str = "requirements.lock") -> dict[str, str]:
    pins = {}
    for line in (HOST / lock).read_text().splitlines():
        match = re.match(r"^([A-Za-z0-9_.\-]+)==([^ ;\\]+)", line)
        if match:
            pins[_normal(match[1])] = match[2]
    return pins


def test_every_pyproject_pin_is_locked_at_its_version():
    project = tomllib.loads((HOST / "pyproject.toml").read_text())["project"]
    wanted = list(project["dependencies"]) + list(project["optional-dependencies"]["test"])
    pins = locked()
    wrong = []
    for requirement in wanted:
        name, version = requirement.split("==")
        if pins.get(_normal(name)) != version:
            wrong.append((requirement, pins.get(_normal(name))))
    assert wrong == []


def test_every_locked_package_has_a_hash():
    blocks = re.split(r"\n(?=[A-Za-z0-9])", (HOST / "requirements.lock").read_text())
    packages = [b for b in blocks if re.match(r"^[A-Za-z0-9_.\-]+==", b)]
    assert len(packages) > 100  # torch, transformers and their whole tree
    assert [b.split()[0] for b in packages if "--hash=sha256:" not in b] == []


def test_the_trackers_extra_is_locked_with_hashes_beside_the_host_lock():
    """requirements-trackers.lock pins the trackers extra and what it needs beyond
    requirements.lock, every package with its hash, none of them pinned twice."""
    project = tomllib.loads((HOST / "pyproject.toml").read_text())["project"]
    pins = locked("requirements-trackers.lock")
    for requirement in project["optional-dependencies"]["trackers"]:
        name, version = requirement.split("==")
        assert pins.get(_normal(name)) == version, requirement
    assert set(pins) & set(locked()) == set()
    blocks = re.split(r"\n(?=[A-Za-z0-9])", (HOST / "requirements-trackers.lock").read_text())
    packages = [b for b in blocks if re.match(r"^[A-Za-z0-9_.\-]+==", b)]
    assert len(packages) == len(pins) > 3
    assert [b.split()[0] for b in packages if "--hash=sha256:" not in b] == []
