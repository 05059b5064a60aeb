"""The host behind a flaky link (tests/flaky_proxy.py, a real TCP proxy on loopback): links cut,
refused and frozen while a client saves tips and a run trains. Each case checks that the run
folder and the memory hold every edit exactly once, and that a retried save (same `editId`)
answers with the outcome the host recorded."""

from __future__ import annotations

import json
import logging
import socket
import time
import uuid

import pytest

from conftest import tiny_run_overrides
from empo2.client.host_client import HostClient, HostError
from empo2.server.transport.protocol import error_codes
from flaky_proxy import FlakyProxy
from server_support import TOKEN, SchemaCheck, connect, copy_run, finished_run, make_host

RUN = "done"
CODES = error_codes()


@pytest.fixture(scope="module", autouse=True)
def info_logs():
    """The host's own lines are INFO (as `empo2-host serve` sets it); log.tail needs them."""
    logger = logging.getLogger("empo2")
    before = logger.level
    logger.setLevel(logging.INFO)
    yield
    logger.setLevel(before)


@pytest.fixture
def check():
    check = SchemaCheck()
    yield check
    check.assert_clean()


@pytest.fixture
def host(tmp_path):
    host = make_host([tmp_path / "runs"])
    yield host
    host.stop()


@pytest.fixture
def proxy(host):
    with FlakyProxy(host.port, lifetime_s=300) as proxy:
        yield proxy


def through(proxy: FlakyProxy, check: SchemaCheck, name: str = "flaky", **kwargs) -> HostClient:
    client = HostClient(proxy.url, TOKEN, observe=check.observer(), **kwargs)
    client.connection_number = client.initialize(name)["connection"]
    return client


def drop(client: HostClient) -> None:
    """What a client does with a link it has given up on: close the socket, no goodbye."""
    try:
        client.ws.socket.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass
    client._reader.join(5)


def wait_closed(client: HostClient, timeout: float = 5) -> None:
    deadline = time.monotonic() + timeout
    while client.closed is None and time.monotonic() < deadline:
        time.sleep(0.02)
    assert client.closed is not None, "the client did not notice the cut"


def reconnect(proxy: FlakyProxy, check: SchemaCheck, timeout: float = 10) -> HostClient:
    deadline = time.monotonic() + timeout
    while True:
        try:
            return through(proxy, check, open_timeout=2)
        except (OSError, TimeoutError):
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)


# -- the proxy itself, on a real connection ------------------------------------------------------


def test_the_proxy_cuts_refuses_and_freezes_a_real_connection(host, proxy, check):
    client = through(proxy, check)
    assert client.request("ping")["time"] > 0

    proxy.freeze()
    rid = client.send("ping")
    with pytest.raises(TimeoutError):
        client.response(rid, timeout=1.0)  # frozen: nothing comes back, nothing closes
    assert client.closed is None
    with pytest.raises((TimeoutError, OSError)):
        HostClient(proxy.url, TOKEN, open_timeout=1.0)  # a new link is frozen too
    proxy.thaw()
    assert "time" in client.response(rid, timeout=5)["result"]  # what waited arrives

    proxy.cut()
    wait_closed(client)
    proxy.refuse()
    with pytest.raises(ConnectionRefusedError):
        HostClient(proxy.url, TOKEN, open_timeout=2)
    proxy.accept()
    again = through(proxy, check)
    assert again.request("ping")["time"] > 0
    assert proxy.stats()["links"] >= 1
    again.close()


def test_log_tail_gives_the_server_lines_and_fills_in_a_gap(host, proxy, check):
    client = through(proxy, check)
    first = client.request("log.tail", {})
    assert first["entries"] and first["dropped"] == 0
    assert any("connection" in e["message"] and "opened" in e["message"] for e in first["entries"])
    numbers = [e["n"] for e in first["entries"]]
    assert numbers == sorted(numbers) and first["newest"] >= numbers[-1]
    last = first["newest"]

    proxy.cut()  # lines logged while the client is away (its own link closing, a new one)
    wait_closed(client)
    client = reconnect(proxy, check)
    gap = client.request("log.tail", {"after": last})
    assert gap["instance"] == first["instance"]
    assert [e["n"] for e in gap["entries"]] == list(range(last + 1, gap["newest"] + 1))
    assert any("closed" in e["message"] for e in gap["entries"])
    assert client.request("log.tail", {"after": gap["newest"]})["entries"] == []
    limited = client.request("log.tail", {"limit": 1})
    assert len(limited["entries"]) == 1 and limited["newest"] > limited["entries"][0]["n"]
    client.close()


# -- saves over a flaky link ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def run_host(tmp_path_factory, tiny_policy, embedder):
    """A host over a copy of a finished run with tips (one host for the module)."""
    root = tmp_path_factory.mktemp("flaky-runs")
    folder = copy_run(finished_run(tmp_path_factory, tiny_policy, embedder), root)
    host = make_host([root], embedder)
    yield host, folder
    host.stop()


def events_with(folder, edit_id: str) -> list[dict]:
    lines = (folder / "memory" / "events.jsonl").read_text(encoding="utf-8").splitlines()
    return [e for e in map(json.loads, lines) if e.get("edit_id") == edit_id]


def history_of(client, tip_id: str) -> list[tuple[str, str]]:
    return [
        (v["kind"], v["text"]) for v in client.request("memory.history", {"runId": RUN, "tipId": tip_id})["versions"]
    ]


def a_tip(client) -> dict:
    items = client.request("memory.list", {"runId": RUN, "limit": 1000})["items"]
    return next(t for t in items if t["author"] == "policy" and not t["deleted"])


def test_a_save_whose_answer_was_lost_is_retried_and_answers_what_was_recorded(run_host, check):
    host, folder = run_host
    watcher = connect(host, check, "watcher")  # a direct client: sees the host apply the edit
    with FlakyProxy(host.port, lifetime_s=120) as proxy:
        client = through(proxy, check)
        tip = a_tip(client)
        edit = {
            "runId": RUN,
            "tipId": tip["id"],
            "text": f"Open the shed first ({uuid.uuid4().hex[:6]}).",
            "expectedVersion": tip["version"],
            "editId": str(uuid.uuid4()),
        }
        seen = len(watcher.notifications)
        proxy.freeze("down")  # the request arrives; its answer never comes back
        client.send("memory.update", edit)
        watcher.wait_for(
            lambda m: m["method"] == "memory/changed" and m["params"]["changes"][0]["tip"]["text"] == edit["text"],
            timeout=30,
            start=seen,
        )
        proxy.cut()
        wait_closed(client)
        proxy.thaw()

        client = reconnect(proxy, check)
        seen = len(watcher.notifications)
        retried = client.request("memory.update", edit)
        assert retried["replayed"] is True
        assert retried["tip"]["version"] == tip["version"] + 1 and retried["tip"]["text"] == edit["text"]
        assert history_of(client, tip["id"]).count(("update", edit["text"])) == 1
        assert len(events_with(folder, edit["editId"])) == 1
        client.request("ping")
        assert not [m for m in watcher.notifications[seen:] if m["method"] == "memory/changed"], (
            "a replayed save must not announce a change"
        )
        client.close()
    watcher.close()


def test_a_save_lost_on_the_way_is_applied_by_its_retry_once(run_host, check):
    host, folder = run_host
    with FlakyProxy(host.port, lifetime_s=120) as proxy:
        client = through(proxy, check)
        tip = a_tip(client)
        edit = {
            "runId": RUN,
            "tipId": tip["id"],
            "text": "Check the greenhouse.",
            "expectedVersion": tip["version"],
            "editId": str(uuid.uuid4()),
        }
        proxy.freeze("up")  # the request never reaches the host
        client.send("memory.update", edit)
        time.sleep(0.3)
        proxy.cut()  # the held bytes are lost with the link
        wait_closed(client)
        proxy.thaw()
        client = reconnect(proxy, check)
        retried = client.request("memory.update", edit)
        assert "replayed" not in retried and retried["tip"]["version"] == tip["version"] + 1
        again = client.request("memory.update", edit)
        assert again["replayed"] is True and again["tip"] == retried["tip"]
        assert history_of(client, tip["id"]).count(("update", edit["text"])) == 1
        assert len(events_with(folder, edit["editId"])) == 1

        # A true conflict stays a conflict: another person's edit came first.
        stale = dict(edit, text="A stale edit.", editId=str(uuid.uuid4()))
        with pytest.raises(HostError) as conflict:
            client.request("memory.update", stale)
        assert conflict.value.data["tip"]["text"] == edit["text"]
        items = client.request("memory.list", {"runId": RUN, "limit": 1000})["items"]
        other = next(t for t in items if t["id"] != tip["id"] and not t["deleted"])
        reused = dict(edit, tipId=other["id"], expectedVersion=other["version"])
        with pytest.raises(HostError) as wrong:
            client.request("memory.update", reused)  # the same edit id for another edit
        assert wrong.value.code == CODES["InvalidParams"] and wrong.value.data == {"field": "params.editId"}
        client.close()


def test_a_frozen_link_with_a_save_in_it_then_a_retry_on_a_new_link_applies_once(run_host, check):
    """The worst order: the retry applies on a new link, then the frozen link thaws and delivers
    the first attempt too. Adds and deletes, as well as an update, land exactly once."""
    host, folder = run_host
    with FlakyProxy(host.port, lifetime_s=120) as proxy:
        old = through(proxy, check, "old")
        tip = a_tip(old)
        update = {
            "runId": RUN,
            "tipId": tip["id"],
            "text": "Look behind the sofa.",
            "expectedVersion": tip["version"],
            "editId": str(uuid.uuid4()),
        }
        add = {
            "runId": RUN,
            "variationKey": tip["variationKey"],
            "text": "Ask the gardener.",
            "editId": str(uuid.uuid4()),
        }
        proxy.freeze()
        old.send("memory.update", update)
        old.send("memory.add", add)
        with pytest.raises(TimeoutError):
            old.response(old.send("ping"), timeout=1.5)  # the client's keepalive gives up
        drop(old)
        proxy.thaw()  # a new link; the old one's bytes are still on their way

        new = reconnect(proxy, check)
        first = new.request("memory.update", update)
        added = new.request("memory.add", add)
        time.sleep(1.0)  # the old link's requests reach the host and are answered into the void
        assert new.request("memory.update", update)["replayed"] is True
        assert new.request("memory.add", add)["replayed"] is True
        assert (
            new.request("memory.get", {"runId": RUN, "tipId": tip["id"]})["tip"]["version"] == first["tip"]["version"]
        )
        assert history_of(new, tip["id"]).count(("update", update["text"])) == 1
        people = new.request("memory.list", {"runId": RUN, "search": "Ask the gardener", "limit": 100})
        assert [t["id"] for t in people["items"]] == [added["tip"]["id"]]
        assert len(events_with(folder, update["editId"])) == 1 and len(events_with(folder, add["editId"])) == 1

        gone = {"runId": RUN, "tipId": added["tip"]["id"], "expectedVersion": 1, "editId": str(uuid.uuid4())}
        proxy.freeze("down")
        new.send("memory.delete", gone)
        time.sleep(0.5)
        proxy.cut()
        proxy.thaw()
        wait_closed(new)
        new = reconnect(proxy, check)
        deleted = new.request("memory.delete", gone)
        assert deleted["replayed"] is True and deleted["tip"]["deleted"]
        assert len(events_with(folder, gone["editId"])) == 1
        new.close()


# -- a live run over a flaky link ----------------------------------------------------------------


@pytest.mark.slow
def test_a_run_keeps_training_through_cuts_and_a_freeze_and_the_folder_matches(tmp_path, tiny_policy, embedder, check):
    """Cut during rollout, a freeze, a refusal: training never waits for the client, and after
    each reconnect what the client reads is the run folder exactly, with its edits once."""
    root = tmp_path / "runs"
    host = make_host([root], embedder)
    watcher = connect(host, check, "watcher")  # a direct client: sees the host apply the edit
    try:
        with FlakyProxy(host.port, lifetime_s=280) as proxy:
            client = through(proxy, check)
            config = tiny_run_overrides(tiny_policy, iterations=4, **{"eval.every": 0})
            client.request("run.start", {"config": config, "name": "flaky"})
            client.wait_for(
                lambda m: m["method"] == "run/progress" and m["params"]["progress"]["phase"] == "rollout", timeout=240
            )
            proxy.cut()  # a cut during rollout
            wait_closed(client)
            client = reconnect(proxy, check)
            assert client.request("run.status", {"runId": "flaky"})["run"]["live"]

            # A person's save during training, its answer lost, retried on a new link.
            client.wait_for(lambda m: m["method"] == "memory/changed", timeout=240)
            tip = next(
                t
                for t in client.request("memory.list", {"runId": "flaky", "limit": 1000})["items"]
                if t["author"] == "policy"
            )
            edit = {
                "runId": "flaky",
                "tipId": tip["id"],
                "text": "EDITED during training.",
                "expectedVersion": tip["version"],
                "editId": str(uuid.uuid4()),
            }
            seen = len(watcher.notifications)
            proxy.freeze("down")
            client.send("memory.update", edit)
            watcher.wait_for(
                lambda m: m["method"] == "memory/changed" and m["params"]["changes"][0]["tip"]["text"] == edit["text"],
                timeout=60,
                start=seen,
            )
            proxy.cut()
            proxy.thaw()
            wait_closed(client)

            proxy.refuse()  # the port is closed for a while; the run does not care
            time.sleep(1.0)
            proxy.accept()
            client = reconnect(proxy, check)
            assert client.request("memory.update", edit)["replayed"] is True

            proxy.freeze()  # a freeze: nothing closes, the client gives up on its own
            with pytest.raises(TimeoutError):
                client.response(client.send("ping"), timeout=1.5)
            drop(client)
            proxy.thaw()
            client = reconnect(proxy, check)

            deadline = time.monotonic() + 240
            while client.request("run.status", {"runId": "flaky"})["run"]["state"] != "finished":
                assert time.monotonic() < deadline, "the run did not finish"
                time.sleep(0.5)

            folder = root / "flaky"
            on_disk = [json.loads(line) for line in (folder / "metrics.jsonl").read_text().splitlines()]
            assert [r["iteration"] for r in on_disk] == [1, 2, 3, 4]
            assert client.request("run.metrics", {"runId": "flaky"})["records"] == on_disk
            index = (folder / "trajectories" / "index.jsonl").read_text().splitlines()
            listed = client.request("trajectory.list", {"runId": "flaky", "limit": 1000})
            assert listed["total"] == len(index) and len({t["id"] for t in listed["items"]}) == len(index)
            assert len(events_with(folder, edit["editId"])) == 1
            history = client.request("memory.history", {"runId": "flaky", "tipId": tip["id"]})["versions"]
            assert [v["text"] for v in history].count(edit["text"]) == 1
            client.close()
    finally:
        watcher.close()
        host.stop()
