"""OpenEnv both ways: `empo2-host serve-env` serves our environments with OpenEnv's own server
classes (envs/openenv_server.py), and `env.name=openenv:<url>` trains on an OpenEnv server
through OpenEnv's own client (envs/openenv_client.py).

Servers run on a thread of this process on a free loopback port, except where the command line
itself is under test. The served environments below are named `test_openenv:<factory>` (this
file is importable: its folder is on the path).
"""

from __future__ import annotations

import asyncio
import http.server
import json
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from conftest import tiny_run_overrides
from empo2.config import ConfigError, load_config
from empo2.envs import EnvironmentFault, StepInfo
from empo2.envs.openenv_server import Served
from empo2.envs.registry import make_env
from empo2.run_folder.folder import RunFolder
from empo2.training.trainer import Trainer

pytestmark = pytest.mark.slow

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "lockbox-env"
HOST = [sys.executable, "-m", "empo2.cli"]
STEPS = {"taken": 0}  # steps of `fails_mid_run` across its instances


class Room:
    def reset(self, seed):
        return "you are in a room .", StepInfo("leave the room", ["wait", "leave"])

    def step(self, action):
        STEPS["taken"] += 1
        if STEPS["taken"] > STEPS.get("fail_after", 10**9):
            raise KeyError("door")
        return "you are still in the room .", 0.0, False, StepInfo("leave the room", ["wait", "leave"])


def fails_mid_run(fail_after: int):
    STEPS["fail_after"] = fail_after
    return Room()


def served(name: str, max_sessions: int = 16, **env) -> Served:
    return Served.environment(
        load_config(None, [f"env.name={name}", *(f"env.{k}={v}" for k, v in env.items())]).env,
        max_sessions=max_sessions,
    )


def run_on(tmp_path, tiny_policy, embedder, url: str, **overrides) -> RunFolder:
    """One run on `openenv:<url>`: 1 task × 2 rollouts × 2 steps an iteration, a checkpoint after
    every iteration, no evaluation."""
    config = load_config(
        tiny_run_overrides(
            tiny_policy,
            **{
                "env.name": f"openenv:{url}",
                "env.tasks": [],
                "env.max_steps": 2,
                "iterations": 2,
                "checkpoint_every": 1,
                "algo.batch_tasks": 1,
                "eval.every": 0,
                **overrides,
            },
        )
    )
    config.root, config.name = str(tmp_path), "run"
    folder = RunFolder.create(tmp_path, "run", config.to_dict())
    trainer = Trainer(config, folder, embedder=embedder)
    try:
        trainer.run()
    finally:
        trainer.close()
    return folder


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_until(condition, timeout: float = 20.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return condition()


def test_one_iteration_trains_through_the_example_served_over_loopback(tmp_path, tiny_policy, embedder, monkeypatch):
    monkeypatch.syspath_prepend(str(EXAMPLE))
    server = served("lockbox_env:LockboxEnv")
    try:
        config = load_config(
            tiny_run_overrides(
                tiny_policy,
                **{"env.name": f"openenv:{server.url}", "env.max_steps": 4, "iterations": 1, "eval.every": 1},
            )
        )
        del config.env.tasks[:]  # all of the served environment's tasks, as its state lists them
        config.root, config.name = str(tmp_path), "served"
        folder = RunFolder.create(tmp_path, "served", config.to_dict())
        trainer = Trainer(config, folder, embedder=embedder)
        try:
            trainer.run()
            assert server.sessions >= 1  # the pool's environments: one session each
        finally:
            trainer.close()
        assert wait_until(lambda: server.sessions == 0)
    finally:
        server.stop()

    run = tmp_path / "served"
    assert json.loads((run / "run.json").read_text())["state"] == "finished"
    assert json.loads((run / "run.json").read_text())["iteration"] == 1
    (metrics,) = [json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines()]
    assert metrics["iteration"] == 1 and "rollout/return" in metrics
    assert {"eval/memory_free/success/escape", "eval/memory_free/success/open-chest"} <= set(metrics)
    summaries = [json.loads(line) for line in (run / "trajectories" / "index.jsonl").read_text().splitlines()]
    assert len(summaries) == 2 * 2 and {s["task"] for s in summaries} <= {"escape", "open-chest"}
    assert {s["variation"] for s in summaries} <= set(range(6))  # the example's training split
    episodes = [json.loads(line) for line in (run / "trajectories" / "iter-000001.jsonl").read_text().splitlines()]
    for episode in episodes:
        assert episode["description"] in (
            "find the key and leave the house through the front door",
            "find the key and open the chest in the cellar",
        )
        assert 1 <= len(episode["steps"]) <= 4
        assert all(
            step["observation"].startswith(("you are in the", "you search", "you take", "the "))
            or step["observation"] == "nothing happens ."
            for step in episode["steps"]
        )
    assert (run / "checkpoints" / "iter-000001" / "trainer.json").is_file()


def test_an_episode_over_openenv_is_the_episode_played_here(monkeypatch):
    """The same task, variation and actions give the same observations, rewards and ends
    through the server as in this process: the mapping loses nothing."""
    monkeypatch.syspath_prepend(str(EXAMPLE))
    server = served("lockbox_env:LockboxEnv")
    try:
        here = make_env(load_config(None, ["env.name=lockbox_env:LockboxEnv"]).env)
        there = make_env(load_config(None, [f"env.name=openenv:{server.url}"]).env)
        assert there.tasks() == here.tasks() == ["escape", "open-chest"]
        assert there.variations("escape", "test") == here.variations("escape", "test")
        for task, variation in (("escape", 2), ("open-chest", 7)):
            played = []
            for env in (here, there):
                observation, info = env.reset(task, variation, seed=1)
                steps = [(observation, info.task_description, info.valid_actions)]
                for n in range(12):
                    action = info.valid_actions[(3 * n + 1) % len(info.valid_actions)] if n % 4 else "look arround!"
                    observation, reward, done, info = env.step(action)
                    steps.append(
                        (observation, reward, done, info.score, info.success, info.valid_actions, info.corrected_action)
                    )
                    if done:
                        break
                played.append(steps)
            assert played[0] == played[1]
        there.close()
    finally:
        server.stop()


def test_serve_env_prints_its_url_and_serves_openenvs_own_client(tmp_path):
    """What a TRL, ART or SkyRL user does: start the command, read its URL, and play through
    OpenEnv's GenericEnvClient; Ctrl-C stops it."""
    from openenv.core.generic_client import GenericEnvClient

    server = subprocess.Popen(
        HOST + ["serve-env", "builtin", "env.max_steps=3", "--port", "0"],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        url = server.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:"), server.stderr.read()
        with GenericEnvClient(base_url=url).sync() as client:
            state = client.state()
            assert state["tasks"] == [
                "power-device",
                "grow-plant",
                "heat-food",
                "repair-radio",
                "charge-robot",
                "fuel-generator",
            ]
            assert state["variations"]["grow-plant"]["test"] and state["instructions"] is None
            first = client.reset(task="grow-plant", variation=3, seed=0)
            assert first.observation["task"] == "grow-plant" and first.observation["variation"] == 3
            assert first.observation["text"].startswith("you are in the")
            assert first.observation["task_description"] and first.observation["valid_actions"]
            results = [client.step({"message": "look around"}) for _ in range(3)]
            assert [r.done for r in results] == [False, False, True]  # env.max_steps=3
            assert client.state()["step_count"] == 3
    finally:
        server.send_signal(signal.SIGINT)
        assert server.wait(timeout=30) == 0


def test_serve_env_says_in_one_sentence_what_it_cannot_serve(tmp_path):
    refused = subprocess.run(
        HOST + ["serve-env", "no_such_module:Env"], cwd=tmp_path, capture_output=True, text=True, timeout=120
    )
    assert refused.returncode == 2 and refused.stdout == ""
    assert refused.stderr.strip().splitlines() == [
        "empo2-host: error: environment 'no_such_module:Env' cannot be imported: ModuleNotFoundError: "
        "No module named 'no_such_module'."
    ]
    refused = subprocess.run(
        HOST + ["serve-env", "builtin", "policy.model=x"], cwd=tmp_path, capture_output=True, text=True, timeout=120
    )
    assert refused.returncode == 2 and "env.KEY=VALUE" in refused.stderr


def test_two_hundred_dropped_sessions_leave_no_session_behind():
    """Each WebSocket is a session with its own environment; 200 clients that reset, play and
    then vanish without a close frame leave the server with none."""
    from websockets.asyncio.client import connect

    server = served("builtin", max_sessions=256)

    async def open_play_and_drop(count: int) -> list[int]:
        sockets = [await connect(server.url.replace("http", "ws") + "/ws", max_size=None) for _ in range(count)]
        for n, ws in enumerate(sockets):
            await ws.send(json.dumps({"type": "reset", "data": {"task": "heat-food", "seed": n}}))
        answers = [json.loads(await ws.recv()) for ws in sockets]
        for ws in sockets[::2]:  # half of them mid-episode
            await ws.send(json.dumps({"type": "step", "data": {"message": "look around"}}))
            assert json.loads(await ws.recv())["type"] == "observation"
        open_now = server.sessions
        for ws in sockets:
            ws.transport.abort()  # gone: no close frame, the TCP connection reset
        return [open_now, sum(a["type"] == "observation" for a in answers)]

    try:
        open_now, reset = asyncio.run(open_play_and_drop(200))
        assert open_now == 200 and reset == 200
        assert wait_until(lambda: server.sessions == 0), f"{server.sessions} sessions left"
    finally:
        server.stop()


def test_a_bad_url_is_a_config_error():
    for url in ("localhost:8000", "ftp://example.org", "http://", "http://127.0.0.1:port"):
        with pytest.raises(ConfigError, match=r"^config key 'env.name' is 'openenv:"):
            load_config(None, [f"env.name=openenv:{url}"])


def test_nothing_listening_fails_the_run_with_one_sentence(tmp_path, tiny_policy, embedder):
    url = f"http://127.0.0.1:{free_port()}"
    sentence = (
        f"environment 'openenv:{url}' cannot be reached at {url}: nothing listens there "
        "(connection refused): is the server running?"
    )
    with pytest.raises(EnvironmentFault) as raised:
        run_on(tmp_path, tiny_policy, embedder, url)
    assert str(raised.value) == sentence
    state = json.loads((tmp_path / "run" / "run.json").read_text())
    assert state["state"] == "failed" and state["error"] == sentence + "." and state["iteration"] == 0


class Http11(http.server.SimpleHTTPRequestHandler):
    protocol_version = "HTTP/1.1"


@pytest.mark.parametrize(
    "handler, why",
    [
        (Http11, "it answered HTTP 404 where an OpenEnv server opens its WebSocket (/ws): not an OpenEnv server"),
        (
            http.server.SimpleHTTPRequestHandler,  # HTTP/1.0, which a WebSocket handshake cannot use
            "it did not answer the WebSocket handshake at /ws with HTTP/1.1: not an OpenEnv server",
        ),
    ],
    ids=["http-1.1-404", "http-1.0"],
)
def test_a_server_that_is_not_openenv_fails_the_run_with_one_sentence(tmp_path, tiny_policy, embedder, handler, why):
    web = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=web.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{web.server_address[1]}"
    try:
        with pytest.raises(EnvironmentFault) as raised:
            run_on(tmp_path, tiny_policy, embedder, url)
    finally:
        web.shutdown()
    sentence = f"environment 'openenv:{url}' cannot be reached at {url}: {why}"
    assert str(raised.value) == sentence
    assert json.loads((tmp_path / "run" / "run.json").read_text())["error"] == sentence + "."


def test_an_error_mid_run_keeps_the_iterations_and_checkpoints_before_it(tmp_path, tiny_policy, embedder):
    STEPS["taken"] = 0
    server = served("test_openenv:fails_mid_run", **{"kwargs": '{"fail_after": 4}'})
    try:
        with pytest.raises(EnvironmentFault) as raised:
            run_on(tmp_path, tiny_policy, embedder, server.url)
    finally:
        server.stop()
    sentence = (
        f"environment 'openenv:{server.url}': the OpenEnv server at {server.url} answered step with an "
        "error: environment 'test_openenv:fails_mid_run' raised KeyError in step: 'door'"
    )
    assert str(raised.value) == sentence
    folder = RunFolder.open(tmp_path / "run")
    assert folder.state()["state"] == "failed" and folder.state()["error"] == sentence + "."
    assert folder.state()["iteration"] == 1 and [m["iteration"] for m in folder.metrics()] == [1]
    assert folder.latest_checkpoint()[0] == 1
    assert len(list(folder.trajectory_summaries())) == 2


def test_a_server_gone_mid_episode_is_one_sentence_not_a_silent_new_session():
    server = served("builtin")
    env = make_env(load_config(None, [f"env.name=openenv:{server.url}"]).env)
    _, info = env.reset("grow-plant", 0, seed=0)
    env.step(info.valid_actions[0])
    server.stop()
    with pytest.raises(EnvironmentFault) as raised:
        env.step(info.valid_actions[0])
    assert str(raised.value) == (
        f"environment 'openenv:{server.url}': the OpenEnv server at {server.url} "
        "closed the session in the middle of an episode"
    )
    env.close()


def test_an_observation_without_text_is_a_protocol_mismatch_of_one_sentence():
    """A server of another OpenEnv environment whose observation carries no text: the sentence
    lists its fields and says how to name the text one."""
    from fastapi import FastAPI
    from openenv.core.env_server import HTTPEnvServer
    from openenv.core.env_server.interfaces import Environment
    from openenv.core.env_server.types import Action, Observation, State

    class Move(Action):
        cell: int

    class Board(Observation):
        cells: list[int]
        to_play: str = "x"
        winner: str = ""

    class Noughts(Environment):
        def reset(self, seed=None, episode_id=None, **kwargs):
            return Board(cells=[0] * 9)

        def step(self, action, timeout_s=None, **kwargs):
            return Board(cells=[1] + [0] * 8)

        @property
        def state(self):
            return State()

    app = FastAPI()
    HTTPEnvServer(Noughts, Move, Board).register_routes(app)
    server = Served(app)
    try:
        env = make_env(load_config(None, [f"env.name=openenv:{server.url}"]).env)
        assert env.tasks() == ["main"]
        with pytest.raises(EnvironmentFault) as raised:
            env.reset("main", 0, seed=0)
        assert str(raised.value) == (
            f"environment 'openenv:{server.url}': the OpenEnv server at {server.url} sent an observation with "
            "no text field of text, prompt, message (its fields: cells, metadata, to_play, winner); name one "
            "with env.kwargs observation_field"
        )
        env.close()
    finally:
        server.stop()
