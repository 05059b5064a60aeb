"""The host server through a real WebSocket client: handshake, auth, bad input, browsing a run,
paths, floods and slow clients. No training here (test_server_training.py has it)."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import time

import pytest
from websockets.exceptions import ConnectionClosed, InvalidStatus
from websockets.sync.client import connect as ws_connect

from empo2.client.host_client import HostClient, HostError
from empo2.server.transport.dispatch import MAX_DEPTH
from empo2.server.transport.protocol import error_codes, protocol_version
from server_support import HEADERS, TOKEN, check, connect, copy_run, finished_run, make_host  # noqa: F401 - check is a fixture

CODES = error_codes()


@pytest.fixture(scope="module")
def run_root(tmp_path_factory, tiny_policy, embedder):
    """A root holding a copy of the finished run (tests here may edit its tips)."""
    root = tmp_path_factory.mktemp("basics-root")
    copy_run(finished_run(tmp_path_factory, tiny_policy, embedder), root)
    return root


@pytest.fixture(scope="module")
def host(run_root, embedder):
    host = make_host([run_root], embedder, requests_per_second=50.0, request_burst=100)
    yield host
    host.stop()


@pytest.fixture
def client(host, check):
    client = connect(host, check)
    yield client
    client.close()


def error_of(client, method, params=None) -> HostError:
    with pytest.raises(HostError) as caught:
        client.request(method, params)
    return caught.value


# -- handshake and authentication -----------------------------------------------------------------


def test_initialize_announces_version_and_capabilities(host, check):
    with connect(host, check, initialize=False) as c:
        assert error_of(c, "ping").code == CODES["NotInitialized"]
        result = c.initialize("studio", {"logMessages": False, "futureFlag": True})
        assert result["protocolVersion"] == protocol_version()
        caps = result["capabilities"]
        assert caps["maxConcurrentRuns"] == 1 and caps["batchRequests"] is False
        assert caps["maxFrameBytes"] == 1 << 20 and "builtin" in caps["presets"]
        assert set(caps["methods"]) >= {"run.start", "memory.update", "trajectory.get"}
        assert "host/resync" in caps["notifications"]
        # What a config file may name at its top, so a client offers only files the host reads.
        assert {"iterations", "env", "algo", "memory", "keep_checkpoints"} <= set(caps["configFields"])
        assert "episodes" not in caps["configFields"] and "keys" not in caps["configFields"]
        assert result["serverInfo"]["pid"] == os.getpid()
        assert (
            error_of(c, "initialize", {"protocolVersion": protocol_version(), "clientInfo": {"name": "again"}}).code
            == CODES["InvalidRequest"]
        )
        assert c.request("ping")["time"] > 0


def test_a_client_of_another_major_version_is_refused(host, check):
    with connect(host, check, initialize=False) as c:
        err = error_of(c, "initialize", {"protocolVersion": "2.0.0", "clientInfo": {"name": "future"}})
        assert err.code == CODES["ProtocolVersionMismatch"] and err.data == {"hostVersion": protocol_version()}


@pytest.mark.parametrize(
    "headers, origin, status",
    [
        ({}, None, 401),
        ({"Authorization": "Bearer wrong-token-wrong-token-wrong"}, None, 401),
        ({"Authorization": f"Basic {TOKEN}"}, None, 401),
        ({"Authorization": f"Bearer {TOKEN}x"}, None, 401),
        ({"Authorization": f"Bearer {TOKEN[:-1]}"}, None, 401),  # a prefix of the token
        ({"Authorization": f"Bearer {TOKEN[:1]}"}, None, 401),
        ({"Authorization": "Bearer "}, None, 401),  # an empty credential
        ({"Authorization": "Bearer"}, None, 401),
        ({"Authorization": f"Bearer {TOKEN} {TOKEN}"}, None, 401),  # the token, whitespace, more
        ({"Authorization": f"Bearer {TOKEN}\tx"}, None, 401),
        ([("Authorization", f"Bearer {TOKEN}"), ("Authorization", f"Bearer {TOKEN}")], None, 401),  # two
        (HEADERS, "http://localhost:3000", 403),
        (HEADERS, "vscode-webview://abc", 403),
        ({}, "https://evil.example", 403),
    ],
)
def test_no_token_wrong_token_and_browser_origins_are_refused(host, headers, origin, status):
    with pytest.raises(InvalidStatus) as caught:
        ws_connect(host.url, additional_headers=headers, origin=origin, open_timeout=5)
    assert caught.value.response.status_code == status


def test_the_right_token_connects(host):
    with ws_connect(host.url, additional_headers=HEADERS, open_timeout=5) as ws:
        ws.send(
            json.dumps(
                {
                    "jsonrpc": "2.0",
                    "id": 1,
                    "method": "initialize",
                    "params": {"protocolVersion": protocol_version(), "clientInfo": {"name": "raw"}},
                }
            )
        )
        assert json.loads(ws.recv(timeout=10))["result"]["protocolVersion"] == protocol_version()


# -- bad input ------------------------------------------------------------------------------------------


BAD_FRAMES = [
    ("{", None, "ParseError"),
    ('{"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {"x": NaN}}', None, "ParseError"),
    ("[" * 100000, None, "ParseError"),
    ('{"jsonrpc":"2.0","id":1,"method":"ping","params":{"n":' + "9" * 5000 + "}}", None, "ParseError"),
    ("[]", None, "InvalidRequest"),
    ('[{"jsonrpc":"2.0","id":1,"method":"ping"}]', None, "InvalidRequest"),
    ('"ping"', None, "InvalidRequest"),
    ("42", None, "InvalidRequest"),
    ('{"jsonrpc":"1.0","id":7,"method":"ping"}', 7, "InvalidRequest"),
    ('{"jsonrpc":"2.0","id":8}', 8, "InvalidRequest"),
    ('{"jsonrpc":"2.0","id":9,"method":5}', 9, "InvalidRequest"),
    ('{"jsonrpc":"2.0","id":1.5,"method":"ping"}', None, "InvalidRequest"),
    ('{"jsonrpc":"2.0","id":true,"method":"ping"}', None, "InvalidRequest"),
    ('{"jsonrpc":"2.0","id":null,"method":"ping"}', None, "InvalidRequest"),
    ('{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}', None, "InvalidRequest"),
    ('{"jsonrpc":"2.0","id":10,"method":"ping","extra":1}', 10, "InvalidRequest"),
    ('{"jsonrpc":"2.0","method":"ping","params":[1]}', None, "InvalidRequest"),
    ('{"jsonrpc":"2.0","id":11,"method":"no.such.method"}', 11, "MethodNotFound"),
    ('{"jsonrpc":"2.0","id":12,"method":"ping","params":[]}', 12, "InvalidParams"),
    ('{"jsonrpc":"2.0","id":13,"method":"ping","params":{"x":1}}', 13, "InvalidParams"),
    ('{"jsonrpc":"2.0","id":"s","method":"trajectory.list","params":{"runId":"done","limit":0}}', "s", "InvalidParams"),
]


@pytest.mark.parametrize("frame, rid, name", BAD_FRAMES)
def test_every_bad_message_gets_its_json_rpc_error(client, frame, rid, name):
    client.send_raw(frame)
    response = client.response(rid, timeout=10)
    assert response["error"]["code"] == CODES[name], response
    assert response["id"] == rid
    assert client.request("ping")["time"] > 0


def _nested_tip_id(levels: int) -> str:
    """memory.get with a tipId of `levels` nested arrays: the frame nests levels + 2 deep."""
    return (
        '{"jsonrpc":"2.0","id":21,"method":"memory.get","params":{"runId":"done","tipId":'
        + "[" * levels
        + "]" * levels
        + "}}"
    )


@pytest.mark.parametrize("levels", [MAX_DEPTH - 1, 300, 900, 3000, 200000])
def test_a_frame_nested_past_the_limit_is_an_invalid_request_before_any_handler(client, levels):
    client.send_raw(_nested_tip_id(levels))
    response = client.response(None, timeout=20)
    error = response["error"]
    assert error["code"] == CODES["InvalidRequest"], response
    assert error["message"] == f"the request nests arrays and objects deeper than {MAX_DEPTH} levels."
    assert client.request("ping")["time"] > 0


def test_a_frame_at_the_depth_limit_is_read_and_checked_against_the_schema(client):
    client.send_raw(_nested_tip_id(MAX_DEPTH - 2))
    error = client.response(21, timeout=20)["error"]
    assert error["code"] == CODES["InvalidParams"] and error["data"] == {"field": "params.tipId"}


def test_a_decoded_message_nested_past_the_limit_never_reaches_the_schema(host):
    """The dispatcher bounds the depth itself, whatever decoded the message: a value ten
    thousand levels deep (beyond the stack of a recursive validator) is InvalidRequest."""
    from empo2.server.transport.dispatch import nesting_depth

    deep: list = []
    for _ in range(10000):
        deep = [deep]
    message = {"jsonrpc": "2.0", "id": 5, "method": "memory.get", "params": {"runId": "done", "tipId": deep}}
    assert nesting_depth(message, MAX_DEPTH) == MAX_DEPTH + 1  # counted no further than needed
    connection = type("Connection", (), {"initialized": True})()
    response = host.call(host.server.dispatcher.handle, connection, message)
    assert response["id"] == 5 and response["error"]["code"] == CODES["InvalidRequest"], response


@pytest.mark.parametrize(
    "method, params, field, words",
    [
        (
            "trajectory.list",
            {"runId": "done", "filter": {"returnMin": "high"}},
            "params.filter.returnMin",
            "must be a number",
        ),
        ("trajectory.list", {"runId": "done", "filter": {"colour": 1}}, "params.filter.colour", "not a known field"),
        ("trajectory.get", {"runId": "done"}, "params.episodeId", "is required"),
        ("trajectory.get", {"runId": "done", "episodeId": "../../etc"}, "params.episodeId", "expected form"),
        (
            "memory.update",
            {"runId": "done", "tipId": "t000001", "text": "x", "expectedVersion": 0},
            "params.expectedVersion",
            "at least 1",
        ),
        ("run.start", {"config": {}, "preset": "builtin"}, "params", "together"),
        ("run.list", {"root": "/"}, "params.root", "not a known field"),
        ("memory.add", {"runId": "done", "variationKey": "a/0", "text": ""}, "params.text", "at least 1"),
        ("trajectory.list", {"runId": "done", "cursor": "zzz"}, "params.cursor", "not a cursor"),
        (
            "memory.update",
            {"runId": "done", "tipId": "t000001", "text": "   ", "expectedVersion": 1},
            "params.text",
            "invalid",
        ),
    ],
)
def test_invalid_params_name_the_field_in_one_sentence(client, method, params, field, words):
    err = error_of(client, method, params)
    assert err.code == CODES["InvalidParams"] and err.data == {"field": field}
    assert words in err.message and err.message.count(". ") == 0 and err.message.endswith(".")


def test_oversize_frames_binary_frames_close_with_a_reason_and_others_carry_on(host, check, client):
    other = connect(host, check, "bystander")
    with ws_connect(host.url, additional_headers=HEADERS, max_size=None) as ws:
        ws.send("[" + " " * (1 << 20) + "]")
        with pytest.raises(ConnectionClosed) as closed:
            ws.recv(timeout=10)
        assert closed.value.rcvd.code == 1009
    with ws_connect(host.url, additional_headers=HEADERS) as ws:
        ws.send(b"\x00\x01binary")
        with pytest.raises(ConnectionClosed) as closed:
            ws.recv(timeout=10)
        assert closed.value.rcvd.code == 1003
    assert other.request("ping")["time"] > 0 and client.request("ping")["time"] > 0
    other.close()


def test_a_flood_is_answered_with_rate_limit_errors_not_queued(tmp_path, check):
    """Burst 100, refilled at 1 a second: of 600 pings sent at once, what the bucket does not
    admit is answered RateLimited (with how long to wait), every ping is answered, another
    connection is served, and the flooder is served again once it waits as told. No time limit:
    how fast a flood is answered is host/benchmarks/rate_limit_flood.py's to print."""
    host = make_host([tmp_path], requests_per_second=1.0, request_burst=100)
    try:
        with connect(host, check, "flooder") as flooder, connect(host, check, "calm") as calm:
            started = time.monotonic()
            ids = [flooder.send("ping") for _ in range(600)]
            answers = [flooder.response(i, timeout=120) for i in ids]
            lasted = time.monotonic() - started
            limited = [a for a in answers if "error" in a]
            assert len(answers) == 600 and limited
            assert all(
                a["error"]["code"] == CODES["RateLimited"] and a["error"]["data"]["retryAfterMs"] > 0 for a in limited
            )
            # The bucket admits its burst and what it refilled while the flood lasted, however
            # slowly this machine answered (the refill is 1 a second, so the bound stays tight).
            assert len(answers) - len(limited) <= 100 + lasted + 1
            assert calm.request("ping")["time"] > 0  # another connection has its own bucket
            for _ in range(5):  # waiting as told, the flooder is served again
                try:
                    assert flooder.request("ping")["time"] > 0
                    break
                except HostError as err:
                    assert err.code == CODES["RateLimited"]
                    time.sleep(err.data["retryAfterMs"] / 1000)
            else:
                pytest.fail("the flooder was not served again after waiting as told")
    finally:
        host.stop()


# -- browsing a finished run ------------------------------------------------------------------------


def test_list_open_status_metrics_and_checkpoints_of_a_finished_run(client, run_root):
    runs = client.request("run.list")
    assert [r["runId"] for r in runs["runs"]] == ["done"] and runs["roots"] == [str(run_root.resolve())]
    assert runs["runs"][0]["state"] == "finished" and runs["runs"][0]["live"] is False
    opened = client.request("run.open", {"path": str(run_root / "done")})["run"]
    assert opened["runId"] == "done" and opened["iteration"] == 2 and opened["episodes"] == 8
    assert opened["config"]["iterations"] == 2 and opened["latestMetrics"]["iteration"] == 2
    assert [c["iteration"] for c in opened["checkpoints"]] == [1, 2] and opened["checkpoints"][-1]["latest"]
    assert client.request("run.status", {"runId": "done"})["run"]["state"] == "finished"
    assert client.request("run.status")["run"] is None  # nothing live
    assert [r["iteration"] for r in client.request("run.metrics", {"runId": "done"})["records"]] == [1, 2]
    assert [
        r["iteration"] for r in client.request("run.metrics", {"runId": "done", "sinceIteration": 1})["records"]
    ] == [2]
    checkpoints = client.request("checkpoint.list", {"runId": "done"})["checkpoints"]
    assert all(c["hasModel"] and c["memoryMarker"]["events_bytes"] > 0 for c in checkpoints)
    assert error_of(client, "run.status", {"runId": "nope"}).code == CODES["RunNotFound"]
    assert error_of(client, "run.pause").code == CODES["RunNotFound"]
    assert error_of(client, "run.stop", {"runId": "done"}).code == CODES["RunStateInvalid"]


def test_trajectories_filter_page_and_open_in_full(client):
    everything = client.request("trajectory.list", {"runId": "done"})
    assert everything["total"] == 8 and everything["nextCursor"] is None
    pages, cursor = [], None
    while True:
        page = client.request(
            "trajectory.list", {"runId": "done", "limit": 3, **({"cursor": cursor} if cursor else {})}
        )
        pages += page["items"]
        cursor = page["nextCursor"]
        if cursor is None:
            break
    assert pages == everything["items"]
    second = client.request("trajectory.list", {"runId": "done", "filter": {"iteration": 2}})
    assert second["total"] == 4 and {s["iteration"] for s in second["items"]} == {2}
    task = everything["items"][0]["task"]
    mine = client.request(
        "trajectory.list",
        {
            "runId": "done",
            "filter": {
                "task": task,
                "rolloutMode": "memory",
                "updateMode": "off-policy",
                "returnMin": -1000,
                "returnMax": 1000,
                "iterationMin": 1,
                "iterationMax": 2,
            },
        },
    )
    assert mine["total"] == sum(s["task"] == task for s in everything["items"])
    wins = client.request("trajectory.list", {"runId": "done", "filter": {"success": True}})["total"]
    losses = client.request("trajectory.list", {"runId": "done", "filter": {"success": False}})["total"]
    assert wins + losses == 8
    episode = client.request("trajectory.get", {"runId": "done", "episodeId": pages[-1]["id"]})["episode"]
    assert episode["id"] == pages[-1]["id"] and episode["steps"] and "tip" in episode
    step = episode["steps"][0]
    assert len(step["action_ids"]) == len(step["behaviour_logprobs"]) and "prompt_ids_no_tips" in step
    err = error_of(client, "trajectory.get", {"runId": "done", "episodeId": "i000009-e0000"})
    assert err.code == CODES["EpisodeNotFound"]


def test_tips_list_get_edit_conflict_delete_history_add(client, host, check):
    listing = client.request("memory.list", {"runId": "done", "limit": 2})
    assert listing["total"] > 2 and len(listing["items"]) == 2 and listing["nextCursor"] == "o2"
    rest = client.request("memory.list", {"runId": "done", "cursor": listing["nextCursor"], "limit": 1000})
    assert listing["total"] == 2 + len(rest["items"])
    tip = listing["items"][0]
    assert client.request("memory.get", {"runId": "done", "tipId": tip["id"]})["tip"] == tip
    assert error_of(client, "memory.get", {"runId": "done", "tipId": "t999999"}).code == CODES["TipNotFound"]

    watcher = connect(host, check, "watcher")
    edited = client.request(
        "memory.update",
        {
            "runId": "done",
            "tipId": tip["id"],
            "text": "Open the shed first.",
            "expectedVersion": tip["version"],
            "author": "Ada",
        },
    )["tip"]
    assert edited["version"] == tip["version"] + 1 and edited["text"] == "Open the shed first."
    # The card's author is the current version's; the first version's stays in `author`.
    assert (edited["author"], edited["versionAuthor"], tip["versionAuthor"]) == ("policy", "Ada", "policy")
    conflict = error_of(
        client,
        "memory.update",
        {"runId": "done", "tipId": tip["id"], "text": "stale", "expectedVersion": tip["version"]},
    )
    assert conflict.code == CODES["VersionConflict"] and conflict.data["tip"] == edited
    found = client.request("memory.list", {"runId": "done", "search": "SHED first"})
    assert [t["id"] for t in found["items"]] == [tip["id"]]

    added = client.request(
        "memory.add", {"runId": "done", "variationKey": tip["variationKey"], "text": "Look behind the sofa."}
    )["tip"]
    # A person who names no author is "you" (never the client program); no score: unscored.
    assert added["id"].startswith("p") and added["author"] == "you" == added["versionAuthor"]
    assert added["score"] is None
    scored = client.request(
        "memory.add",
        {"runId": "done", "variationKey": tip["variationKey"], "text": "Try the garage.", "score": 40, "author": "Bob"},
    )["tip"]
    assert (scored["score"], scored["author"]) == (40, "Bob")
    client.request("memory.delete", {"runId": "done", "tipId": scored["id"], "expectedVersion": 1, "author": "Bob"})
    people = client.request("memory.list", {"runId": "done", "filter": {"author": "person"}})
    assert [t["id"] for t in people["items"]] == [added["id"]]  # the deleted one left the list
    task = tip["variationKey"].split("/")[0]
    by_task = client.request("memory.list", {"runId": "done", "filter": {"task": task}})
    assert by_task["total"] >= 2 and all(t["variationKey"].startswith(task + "/") for t in by_task["items"])

    deleted = client.request("memory.delete", {"runId": "done", "tipId": added["id"], "expectedVersion": 1})["tip"]
    assert deleted["deleted"] and deleted["version"] == 2
    assert added["id"] not in [
        t["id"] for t in client.request("memory.list", {"runId": "done", "limit": 1000})["items"]
    ]
    assert added["id"] in [
        t["id"]
        for t in client.request("memory.list", {"runId": "done", "limit": 1000, "filter": {"includeDeleted": True}})[
            "items"
        ]
    ]
    history = client.request("memory.history", {"runId": "done", "tipId": tip["id"]})["versions"]
    assert [(v["version"], v["kind"], v["author"]) for v in history] == [(1, "add", "policy"), (2, "update", "Ada")]
    # A deleted tip stays findable: its history, and `memory.get` with who deleted it.
    gone = client.request("memory.history", {"runId": "done", "tipId": added["id"]})["versions"]
    assert [(v["version"], v["kind"], v["author"], v["text"]) for v in gone] == [
        (1, "add", "you", "Look behind the sofa."),
        (2, "delete", "you", "Look behind the sofa."),
    ]
    got = client.request("memory.get", {"runId": "done", "tipId": added["id"]})["tip"]
    assert got["deleted"] and got["versionAuthor"] == "you"
    assert (
        error_of(
            client, "memory.update", {"runId": "done", "tipId": added["id"], "text": "x", "expectedVersion": 2}
        ).code
        == CODES["RunStateInvalid"]
    )
    assert (
        error_of(client, "memory.add", {"runId": "done", "variationKey": "a/1", "text": "x", "author": "policy"}).code
        == CODES["InvalidParams"]
    )

    watcher.wait_for(
        lambda m: m["method"] == "memory/changed" and m["params"]["changes"][-1]["change"] == "deleted", timeout=10
    )
    changes = [c for m in watcher.notifications if m["method"] == "memory/changed" for c in m["params"]["changes"]]
    assert [(c["change"], c["by"]["kind"], c["by"]["name"]) for c in changes] == [
        ("updated", "person", "Ada"),
        ("added", "person", "you"),
        ("added", "person", "Bob"),
        ("deleted", "person", "Bob"),
        ("deleted", "person", "you"),
    ]
    assert {c["by"]["connection"] for c in changes} == {client.connection_number}
    watcher.close()


def test_the_tips_of_a_run_another_process_trains_are_read_from_a_snapshot_and_not_changed(client, run_root, embedder):
    """A terminal's `train` (or another window's host) holds the run's memory: this host reads
    what it has written so far and refuses changes in one sentence, rather than an internal error."""
    from empo2.memory.store import MemoryStore

    folder = run_root / "elsewhere"
    shutil.copytree(run_root / "done", folder)
    holder = MemoryStore.open(folder / "memory", embedder)  # the other process's writer
    try:
        held = {t.id: t.text for t in holder.list_tips(limit=10_000)[0]}
        listed = client.request("memory.list", {"runId": "elsewhere", "limit": 1000})
        assert {t["id"]: t["text"] for t in listed["items"]} == held and listed["total"] == len(held)
        first = listed["items"][0]
        assert client.request("memory.get", {"runId": "elsewhere", "tipId": first["id"]})["tip"] == first
        # The writer goes on; the next read sees it.
        written = holder.add_tip(first["variationKey"], "the fuse was in the attic", 100.0)
        again = client.request("memory.list", {"runId": "elsewhere", "limit": 1000})["items"]
        assert written.id in [t["id"] for t in again]
        before = (folder / "memory" / "events.jsonl").read_bytes()
        for method, params in (
            ("memory.add", {"variationKey": first["variationKey"], "text": "x"}),
            ("memory.update", {"tipId": first["id"], "text": "x", "expectedVersion": 1}),
            ("memory.delete", {"tipId": first["id"], "expectedVersion": 1}),
        ):
            err = error_of(client, method, {"runId": "elsewhere", **params})
            assert err.code == CODES["RunBusy"] and "trained by another process" in str(err), (method, err)
        assert (folder / "memory" / "events.jsonl").read_bytes() == before  # nothing written by reads or refusals
    finally:
        holder.close()
    # Once that process lets go, this host opens the store itself and edits land.
    added = client.request(
        "memory.add", {"runId": "elsewhere", "variationKey": first["variationKey"], "text": "Look in the attic."}
    )["tip"]
    assert added["text"] == "Look in the attic."


# -- paths --------------------------------------------------------------------------------------------


def test_paths_cannot_escape_the_run_roots(client, run_root, tmp_path_factory, tiny_policy, embedder):
    outside = copy_run(finished_run(tmp_path_factory, tiny_policy, embedder), tmp_path_factory.mktemp("outside"))
    link = run_root / "sneaky"
    link.symlink_to(outside, target_is_directory=True)
    try:
        for path in (
            str(outside),
            str(run_root / ".." / outside.parent.name / "done"),
            str(link),
            "/etc",
            "~",
            "/",
            str(run_root) + "/../../../../../../etc/passwd",
            "a\x00b",
        ):
            err = error_of(client, "run.open", {"path": path})
            assert err.code == CODES["PathNotAllowed"], (path, err)
        err = error_of(client, "memory.list", {"runId": "sneaky"})
        assert err.code == CODES["PathNotAllowed"]
        assert error_of(client, "run.start", {"root": str(outside.parent)}).code == CODES["PathNotAllowed"]
        assert error_of(client, "run.start", {"configFile": "/etc/hostname"}).code == CODES["PathNotAllowed"]
        assert error_of(client, "run.open", {"path": str(run_root / "missing")}).code == CODES["RunNotFound"]
        assert error_of(client, "run.open", {"path": str(run_root)}).code == CODES["RunNotFound"]
        assert "sneaky" not in [r["runId"] for r in client.request("run.list")["runs"]]
    finally:
        link.unlink()


def test_a_bad_config_is_one_sentence_and_creates_nothing(client, run_root):
    before = sorted(p.name for p in run_root.iterdir())
    for params, words in (
        ({"preset": "nope"}, "no preset named 'nope'"),
        ({"config": {"iterations": "many"}}, "'iterations' must be an integer"),
        ({"preset": "builtin", "overrides": ["algo.nonsense=1"]}, "unknown config key"),
        ({"config": {}, "name": "done"}, "already exists"),
    ):
        err = error_of(client, "run.start", params)
        assert err.code in (CODES["ConfigInvalid"], CODES["RunExists"]) and words in err.message
    assert sorted(p.name for p in run_root.iterdir()) == before


# -- many clients, slow clients -----------------------------------------------------------------------


def test_a_stuck_client_gets_resync_while_others_get_everything_in_order(host, check):
    """1,500 notifications of 16 KB at 1,000 a second: a client that never reads overflows its
    queue and, when it reads again, finds host/resync where notifications were dropped; a client
    that keeps up gets every one, in order; publishing never waits for either."""
    fast = HostClient(host.url, TOKEN)  # no per-message validation: it must keep up (checked below)
    fast.initialize("fast")
    stuck = ws_connect(host.url, additional_headers=HEADERS, max_queue=1, legacy=True)
    stuck.send(
        json.dumps(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {"protocolVersion": protocol_version(), "clientInfo": {"name": "stuck"}},
            }
        )
    )
    time.sleep(0.3)
    count, long_path = 1500, "/runs/" + "x" * 16000

    stuck_outbox = next(s.outbox for s in host.server.hub.subscribers if s.client_name == "stuck")
    limit = stuck_outbox.limit

    async def publish_all():
        """Like a trainer: a few notifications per loop turn, the loop free in between. Returns
        the most notifications the stuck client's outbox ever held right after a publish."""
        most = 0
        for i in range(count):  # run/state is never merged: each one takes a queue slot
            host.server.hub.publish(
                "run/state",
                {
                    "run": {
                        "runId": "fake",
                        "path": long_path,
                        "state": "running",
                        "iteration": i,
                        "iterations": count,
                        "live": True,
                        "updated": None,
                    }
                },
            )
            most = max(most, len(stuck_outbox))
            if i % 10 == 9:
                await asyncio.sleep(0.01)
        return most

    # Publishing never waits for a client: all 1,500 are published while the stuck client reads
    # nothing, and its backlog stays bounded (the limit, or the limit's worth replaced by one
    # host/resync) instead of growing or holding the publisher back.
    assert 1 <= host.call(publish_all, timeout=60) <= limit + 1
    assert stuck_outbox.resyncs >= 1
    fast.wait_for(lambda m: m["method"] == "run/state" and m["params"]["run"]["iteration"] == count - 1, timeout=60)
    mine = [m for m in fast.notifications if m["method"] == "run/state"]
    assert [m["params"]["run"]["iteration"] for m in mine] == list(range(count))
    for m in mine[::100]:
        check.observe("host→client", m, None)
    seqs = [m["params"]["seq"] for m in fast.notifications]
    assert seqs == sorted(seqs) and len(set(seqs)) == len(seqs)

    received = []
    while True:
        try:
            message = json.loads(stuck.recv(timeout=3))
        except TimeoutError:
            break
        check.observe("host→client", message, "initialize" if message.get("id") == 1 else None)
        received.append(message)
    stuck.close()
    assert received[0]["id"] == 1 and "result" in received[0]  # responses are never dropped
    resyncs = [m for m in received if m.get("method") == "host/resync"]
    states = [m["params"]["run"]["iteration"] for m in received if m.get("method") == "run/state"]
    assert resyncs and len(states) < count
    assert len(states) + sum(r["params"]["dropped"] for r in resyncs) == count
    assert states == sorted(states)
    seqs = [m["params"]["seq"] for m in received[1:]]
    assert seqs == sorted(seqs)
    assert fast.request("ping")["time"] > 0
    fast.close()
