"""Fuzzing the real server: 10,000+ random and mutated messages, seeded, over loopback.

The server must answer every one with a schema-valid message (an error where the message is
bad), never an InternalError, keep answering ping, keep other clients served, and leave the run
folder byte for byte as it was. Requests that could legitimately change the folder (run.start,
run.resume, memory.add/update/delete, shutdown) are generated only in forms the schema rejects,
so any change on disk is a bug, not luck.
"""

from __future__ import annotations

import json
import random
import string
import time

import pytest
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import connect as ws_connect

from empo2.client.host_client import HostClient
from empo2.server.transport.protocol import error_codes, request_methods
from server_support import HEADERS, SchemaCheck, connect, copy_run, finished_run, hash_tree, make_host

pytestmark = pytest.mark.slow

MESSAGES = 10_000
TIME_BUDGET_S = 150
WRITERS = {
    "run.start",
    "run.resume",
    "memory.add",
    "memory.update",
    "memory.delete",
    "shutdown",
    "run.pause",
    "run.stop",
}
READERS = sorted(set(request_methods()) - WRITERS - {"initialize"})


class Fuzzer:
    """Seeded generator of frames: valid-looking requests, mutations of them, and junk."""

    def __init__(self, seed: int, run_id: str, run_path: str, episodes: list[str], tips: list[str]):
        self.rng = random.Random(seed)
        self.next_id = 1000
        self.strings = [
            "",
            " ",
            "done",
            run_id,
            run_path,
            run_path + "/..",
            "../" * 8 + "etc",
            "/",
            "~",
            "\x00",
            "é" * 30,
            "\u202e",
            "💥",
            "o0",
            "o99999",
            "t000001",
            "p000001",
            "i000001-e0000",
            *episodes[:4],
            *tips[:4],
            "x" * 5000,
            "builtin",
            "memory",
            "off-policy",
            "NaN",
            "{}",
            "[]",
            "null",
        ]
        self.valid = {"runId": run_id, "episodeId": episodes, "tipId": tips, "path": run_path}

    # -- values ---------------------------------------------------------------------------------

    def value(self, depth: int = 0):
        kind = self.rng.randrange(9 if depth < 3 else 6)
        r = self.rng
        return [
            lambda: r.choice(self.strings),
            lambda: r.choice([0, -1, 1, 2, 2**31, -(2**63), 2**53 + 1, 10**30]),
            lambda: r.choice([0.5, -1e308, 1e-300, 3.14]),
            lambda: r.choice([True, False]),
            lambda: None,
            lambda: "".join(r.choice(string.printable) for _ in range(r.randrange(0, 40))),
            lambda: [self.value(depth + 1) for _ in range(r.randrange(0, 4))],
            lambda: {self.key(): self.value(depth + 1) for _ in range(r.randrange(0, 4))},
            lambda: {"filter": {self.key(): self.value(depth + 1)}},
        ][kind]()

    def key(self) -> str:
        return self.rng.choice(
            [
                "runId",
                "episodeId",
                "tipId",
                "path",
                "filter",
                "cursor",
                "limit",
                "text",
                "expectedVersion",
                "iteration",
                "returnMin",
                "success",
                "search",
                "sinceIteration",
                "config",
                "preset",
                "overrides",
                "variationKey",
                "author",
                "task",
                "x",
                "",
            ]
        )

    def params_for(self, method: str) -> dict:
        """Half well-formed for the method (to reach the handlers), half random."""
        r = self.rng
        params = self.well_formed(method) if r.random() < 0.5 else {}
        for key in ("runId", "episodeId", "tipId", "path"):
            if r.random() < 0.1:
                valid = self.valid[key]
                params[key] = r.choice(valid) if isinstance(valid, list) and valid else valid
        if r.random() < 0.2:
            params[self.key()] = self.value(1)
        if method in WRITERS:
            params["__fuzz__"] = 1  # unknown field: the schema rejects it, so nothing is written
        return params

    def well_formed(self, method: str) -> dict:
        r = self.rng
        run_id = self.valid["runId"] if r.random() < 0.85 else r.choice(["nope", "done~2", "a.b"])
        tip = r.choice(self.valid["tipId"] + ["t999999", "p000001"])
        episode = r.choice(self.valid["episodeId"] + ["i000009-e0000", "i000001-e9999"])
        page = {
            k: v for k, v in (("limit", r.randrange(1, 50)), ("cursor", f"o{r.randrange(0, 12)}")) if r.random() < 0.5
        }
        trajectory_filter = {
            k: v
            for k, v in (
                ("iteration", r.randrange(0, 4)),
                ("task", r.choice(["power-device", "grow-plant", "x"])),
                ("variation", r.randrange(0, 6)),
                ("rolloutMode", r.choice(["memory", "memory-free"])),
                ("updateMode", r.choice(["on-policy", "off-policy"])),
                ("returnMin", r.uniform(-100, 100)),
                ("returnMax", r.uniform(-100, 100)),
                ("success", r.random() < 0.5),
                ("iterationMin", r.randrange(0, 3)),
                ("iterationMax", r.randrange(0, 3)),
            )
            if r.random() < 0.2
        }
        memory_filter = {
            k: v
            for k, v in (
                ("task", r.choice(["power-device", "grow-plant"])),
                ("author", r.choice(["policy", "person"])),
                ("includeDeleted", r.random() < 0.5),
                ("includeEvicted", r.random() < 0.5),
                ("variationKey", r.choice(["power-device/0", "grow-plant/1", "x"])),
            )
            if r.random() < 0.3
        }
        templates = {
            "run.status": {"runId": run_id} if r.random() < 0.8 else {},
            "run.open": {"path": r.choice([self.valid["path"], self.valid["path"] + "/..", "/tmp", "."])},
            "run.metrics": {"runId": run_id, "sinceIteration": r.randrange(0, 3)},
            "trajectory.list": {"runId": run_id, "filter": trajectory_filter, **page},
            "trajectory.get": {"runId": run_id, "episodeId": episode},
            "memory.list": {"runId": run_id, "filter": memory_filter, "search": r.choice(["", "go", "zz"]), **page},
            "memory.get": {"runId": run_id, "tipId": tip},
            "memory.history": {"runId": run_id, "tipId": tip},
            "checkpoint.list": {"runId": run_id},
            "memory.update": {"runId": run_id, "tipId": tip, "text": "fuzz", "expectedVersion": 1},
            "memory.delete": {"runId": run_id, "tipId": tip, "expectedVersion": 1},
            "memory.add": {"runId": run_id, "variationKey": "grow-plant/1", "text": "fuzz"},
            "run.resume": {"runId": run_id},
            "run.start": {"preset": "builtin-smoke"},
        }
        return dict(templates.get(method, {}))

    def request(self) -> tuple[dict, bool]:
        """A request and whether its id is a unique valid one (the others get id null)."""
        r = self.rng
        self.next_id += 1
        method = r.choice(READERS + sorted(WRITERS)) if r.random() < 0.9 else self.value()
        message = {
            "jsonrpc": "2.0",
            "id": self.next_id if r.random() < 0.5 else f"s{self.next_id}",
            "method": method,
            "params": self.params_for(method if isinstance(method, str) else ""),
        }
        return message, True

    # -- frames ---------------------------------------------------------------------------------

    def mutate(self, message: dict) -> dict:
        r = self.rng
        message = json.loads(json.dumps(message))
        batch = r.random() < 0.05
        for _ in range(r.randrange(1, 4)):
            choice = r.randrange(7)
            if choice == 0:
                message.pop(r.choice(list(message)), None)
            elif choice == 1:
                message[r.choice(["jsonrpc", "id", "method", "params", "extra"])] = self.value()
            elif choice == 2 and isinstance(message.get("params"), dict) and message["params"]:
                message["params"][r.choice(list(message["params"]))] = self.value()
            elif choice == 3:
                message["params"] = self.value()
            elif choice == 4:
                message["jsonrpc"] = r.choice(["1.0", 2, "2.0 ", None])
            elif choice == 5:
                message["id"] = r.choice([None, 1.5, True, {"a": 1}, [1], "x" * 300])
            elif choice == 6 and isinstance(message.get("method"), str):
                message["method"] = message["method"][:-1] + r.choice(["", "x", ".", "/"])
        if isinstance(message.get("method"), str) and message["method"] in WRITERS:
            if not isinstance(message.get("params"), dict):
                message["params"] = {}
            message["params"]["__fuzz__"] = 1
        return [message] if batch else message

    def frame(self) -> str:
        r = self.rng
        roll = r.random()
        if roll < 0.45:
            return json.dumps(self.request()[0])
        if roll < 0.80:
            return json.dumps(self.mutate(self.request()[0]))
        if roll < 0.87:
            text = json.dumps(self.request()[0])
            cut = r.randrange(0, len(text))
            return text[:cut] + r.choice(["", "}", "]", '"', "\\", "\x00", "ÿ"]) + text[cut + 1 :]
        if roll < 0.93:
            return json.dumps(self.value())
        if roll < 0.96:
            return r.choice(
                [
                    "[" * r.randrange(1, 200000),
                    "{" * 5000,
                    '{"a":' * 3000,
                    "NaN",
                    "Infinity",
                    "-",
                    "1e999999",
                    '"\\ud800"',
                    "\ufeff{}",
                    "",
                ]
            )
        return "".join(r.choice(string.printable) for _ in range(r.randrange(1, 200)))


def test_ten_thousand_random_and_mutated_messages(tmp_path, tmp_path_factory, tiny_policy, embedder):
    root = tmp_path / "runs"
    run = copy_run(finished_run(tmp_path_factory, tiny_policy, embedder), root)
    episodes = [json.loads(line)["id"] for line in (run / "trajectories" / "index.jsonl").read_text().splitlines()]
    tips = sorted(
        {
            json.loads(line)["tip"]["id"]
            for line in (run / "memory" / "events.jsonl").read_text().splitlines()
            if '"kind":"add"' in line
        }
    )
    before = hash_tree(root)
    check = SchemaCheck()
    host = make_host([root], embedder, requests_per_second=1e6, request_burst=10**6)
    try:
        bystander = connect(host, check, "bystander")
        fuzzer = Fuzzer(seed=20260229, run_id=run.name, run_path=str(run), episodes=episodes, tips=tips)
        sent, started = 0, time.monotonic()
        internal: list[dict] = []
        check_observe = check.observer()

        outcomes: dict = {}

        def observe(direction, message, method):
            if direction == "host→client" and isinstance(message, dict) and "id" in message:
                key = message["error"]["code"] if "error" in message else "ok " + str(method)
                outcomes[key] = outcomes.get(key, 0) + 1
            if (
                direction == "host→client"
                and isinstance(message, dict)
                and message.get("error", {}).get("code") == error_codes()["InternalError"]
            ):
                internal.append(message)
            if direction == "host→client":
                check_observe(direction, message, method)

        client = HostClient(host.url, HEADERS["Authorization"].split()[1], observe=observe)
        client.initialize("fuzzer")
        while sent < MESSAGES:
            assert time.monotonic() - started < TIME_BUDGET_S, f"only {sent} messages in the time budget"
            for _ in range(40):
                client.send_raw(fuzzer.frame())
                sent += 1
            client.request("ping", timeout=30)  # the window: at most 40 requests outstanding

        # Frame-level abuse on fresh connections: binary, oversize, invalid UTF-8 via raw bytes.
        for frame, code in ((b"\x81binary", 1003), ("x" * ((1 << 20) + 1), 1009)):
            for _ in range(5):
                with ws_connect(host.url, additional_headers=HEADERS, max_size=None) as ws:
                    ws.send(frame)
                    with pytest.raises(ConnectionClosed) as closed:
                        ws.recv(timeout=10)
                    assert closed.value.rcvd.code == code
                    sent += 1

        assert sent >= MESSAGES
        print(f"fuzz: {sent} frames in {time.monotonic() - started:.1f} s; answers: {outcomes}")
        assert not internal, internal[:3]
        assert client.request("ping")["time"] > 0 and bystander.request("ping")["time"] > 0
        assert bystander.request("run.status", {"runId": run.name})["run"]["state"] == "finished"
        check.assert_clean()
        assert check.checked > MESSAGES / 2
        client.close()
        bystander.close()
    finally:
        host.stop()
    assert hash_tree(root) == before
