"""The per-client outbox on its own: merging, the resync signal, responses never dropped."""

from __future__ import annotations

import asyncio

from empo2.server.transport.fanout import MERGE_LIMIT, Hub, Outbox


def note(method, seq, **params):
    return {"jsonrpc": "2.0", "method": method, "params": {"seq": seq, **params}}


def drain(outbox: Outbox) -> list[dict]:
    async def run():
        outbox.close()
        found = []
        while (message := await outbox.get()) is not None:
            found.append(message)
        return found

    return asyncio.run(run())


def test_progress_keeps_the_newest_and_lists_are_joined_per_run():
    out = Outbox(limit=10)
    seq = iter(range(100, 200)).__next__
    out.put_notification(note("run/progress", 1, runId="a", progress={"done": 1}), seq)
    out.put_notification(note("run/progress", 2, runId="a", progress={"done": 2}), seq)
    out.put_notification(note("run/metrics", 3, runId="a", records=[{"iteration": 1}]), seq)
    shared = note("run/metrics", 4, runId="a", records=[{"iteration": 2}])
    out.put_notification(shared, seq)
    out.put_notification(note("run/metrics", 5, runId="b", records=[{"iteration": 1}]), seq)
    got = drain(out)
    assert [m["method"] for m in got] == ["run/progress", "run/metrics", "run/metrics"]
    assert got[0]["params"]["progress"] == {"done": 2}
    assert got[1]["params"]["records"] == [{"iteration": 1}, {"iteration": 2}] and got[1]["params"]["seq"] == 4
    assert shared["params"]["records"] == [{"iteration": 2}]  # the hub's message is not mutated
    assert got[2]["params"]["runId"] == "b"


def test_merging_stops_at_the_limit():
    out = Outbox(limit=100)
    for i in range(MERGE_LIMIT + 1):
        out.put_notification(note("log/message", i + 1, entries=[{"message": str(i)}]), lambda: 0)
    got = drain(out)
    assert [len(m["params"]["entries"]) for m in got] == [MERGE_LIMIT, 1]


def test_overflow_drops_notifications_keeps_responses_and_signals_resync():
    out = Outbox(limit=3)
    counter = iter(range(50, 100)).__next__
    out.put_response({"jsonrpc": "2.0", "id": 1, "result": {}})
    for i in range(3):
        out.put_notification(note("run/state", i + 1, run={"i": i}), counter)
    out.put_response({"jsonrpc": "2.0", "id": 2, "result": {}})
    out.put_notification(note("run/state", 4, run={"i": 3}), counter)  # the 4th overflows
    out.put_notification(note("run/state", 5, run={"i": 4}), counter)
    got = drain(out)
    assert [m.get("id", m.get("method")) for m in got] == [1, 2, "host/resync", "run/state"]
    assert got[2]["params"] == {"seq": 50, "reason": got[2]["params"]["reason"], "dropped": 4}
    assert got[3]["params"]["run"] == {"i": 4}


def test_the_hub_stamps_one_order_for_every_subscriber():
    class Sub:
        def __init__(self, wanted):
            self.outbox, self.wanted = Outbox(limit=100), wanted

        def wants(self, method):
            return method in self.wanted

    async def run():
        hub = Hub(asyncio.get_running_loop())
        a, b = Sub({"run/state", "log/message"}), Sub({"run/state"})
        hub.subscribers |= {a, b}
        hub.publish("run/state", {"run": 1})
        hub.publish("log/message", {"entries": [1]})
        hub.publish("run/state", {"run": 2})
        return a, b

    a, b = asyncio.run(run())
    assert [m["params"]["seq"] for m in drain(a.outbox)] == [1, 2, 3]
    assert [m["params"]["seq"] for m in drain(b.outbox)] == [1, 3]
