"""Helpers of the server tests: a schema validator for every message, hosts, clients, run folders.

Every test client gets `SchemaCheck.observe` as its observer, so every message in both directions
is validated against protocol/empo2-protocol.schema.json: requests against `ClientMessage`,
notifications against `Notification`, error responses against `ErrorResponse`, and each success
response against the `...Response` definition of the method it answers.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import threading
from pathlib import Path

import pytest

from conftest import tiny_run_overrides
from empo2.client.host_client import HostClient
from empo2.server.embedded import EmbeddedHost
from empo2.server.settings import Settings
from empo2.server.transport.connection import Limits
from empo2.server.transport.protocol import Validators, load_schema, request_methods

TOKEN = "test-token-0123456789abcdef0123456789abcdef"
HEADERS = {"Authorization": f"Bearer {TOKEN}"}


class SchemaCheck:
    """Validates messages; remembers failures (a reader thread cannot raise into the test)."""

    def __init__(self):
        self.validators = Validators(load_schema())
        self.responses = {m: r.replace("Request", "Response") for m, r in request_methods().items()}
        self.failures: list[str] = []
        self.checked = 0
        self.methods_answered: set[str] = set()
        self._invalid_requests: dict[tuple, bool] = {}
        self._sources = 0
        self._lock = threading.Lock()

    def definition(self, direction: str, message, method: str | None) -> str:
        if direction == "client→host":
            return "ClientMessage"
        if isinstance(message, dict) and "id" in message:
            if "error" in message:
                return "ErrorResponse"
            return self.responses.get(method, "SuccessResponse")
        return "Notification"

    def observer(self):
        """An observe function for one client (request ids are per client)."""
        self._sources += 1
        source = self._sources
        return lambda direction, message, method: self.observe(direction, message, method, source)

    def observe(self, direction: str, message, method: str | None, source: int = 0) -> None:
        """Host messages must match the schema. A client request may be deliberately invalid;
        then the host must not have accepted it (a success answer to it is a failure)."""
        name = self.definition(direction, message, method)
        errors = self.validators.errors(name, message)
        with self._lock:
            self.checked += 1
            if direction == "client→host":
                self._invalid_requests[(source, repr(message.get("id")))] = bool(errors)
                return
            key = (source, repr(message.get("id")) if isinstance(message, dict) else None)
            if "result" in message and self._invalid_requests.pop(key, False):
                self.failures.append(f"the host accepted a request the schema rejects: {str(message)[:300]}")
            if errors:
                worst = errors[0]
                self.failures.append(
                    f"{direction} {name}: {worst.message[:300]} at {list(worst.absolute_path)} in {str(message)[:300]}"
                )
            elif name.endswith("Response") and name not in ("ErrorResponse", "SuccessResponse"):
                self.methods_answered.add(method)

    def assert_clean(self) -> None:
        assert not self.failures, "\n".join(self.failures[:10])


def make_host(roots, embedder=None, follow_interval_s: float = 2.0, **limits) -> EmbeddedHost:
    settings = Settings(
        token=TOKEN,
        roots=[Path(r) for r in roots],
        limits=Limits(**limits),
        shutdown_grace_s=30,
        embedder_factory=(lambda: embedder) if embedder else None,
        follow_interval_s=follow_interval_s,
    )
    return EmbeddedHost(settings).start()


def connect(
    host: EmbeddedHost, check: SchemaCheck, name: str = "test", initialize: bool = True, **kwargs
) -> HostClient:
    client = HostClient(host.url, TOKEN, observe=check.observer(), **kwargs)
    if initialize:
        client.connection_number = client.initialize(name)["connection"]
    return client


def hash_tree(path: Path) -> dict[str, str]:
    """sha256 of every file under path (relative names); symlinks by their target."""
    digests = {}
    for folder, _, files in os.walk(path):
        for name in files:
            p = Path(folder) / name
            rel = str(p.relative_to(path))
            digests[rel] = ("link:" + os.readlink(p)) if p.is_symlink() else hashlib.sha256(p.read_bytes()).hexdigest()
    return digests


_FINISHED: dict[str, Path] = {}


def finished_run(tmp_path_factory, tiny_policy, embedder) -> Path:
    """A finished two-iteration run folder with tips, trajectories and checkpoints (built once;
    copy it before changing it)."""
    if "path" not in _FINISHED:
        folder, _ = train_tiny_run(
            tmp_path_factory.mktemp("finished-runs"), "done", tiny_policy, embedder, iterations=2
        )
        _FINISHED["path"] = folder.path
    return _FINISHED["path"]


def train_tiny_run(root: Path, name: str, tiny_policy, embedder, iterations: int):
    """Trains the tiny built-in policy for `iterations` (no evaluation) into root/name with the
    real trainer; returns (its RunFolder, its config)."""
    from empo2.config import load_config
    from empo2.run_folder.folder import RunFolder
    from empo2.training.trainer import Trainer

    config = load_config(tiny_run_overrides(tiny_policy, iterations=iterations, **{"eval.every": 0}))
    config.root, config.name = str(root), name
    folder = RunFolder.create(root, name, config.to_dict())
    trainer = Trainer(config, folder, embedder=embedder)
    trainer.run()
    trainer.memory.close()
    trainer.close()
    return folder, config


@pytest.fixture(scope="module")
def check():
    """A module's schema check: every message seen must match the schema (checked at teardown).
    Import it into a test module to use it there."""
    check = SchemaCheck()
    yield check
    check.assert_clean()


def copy_run(source: Path, root: Path) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    target = root / source.name
    shutil.copytree(source, target, symlinks=True)
    return target
