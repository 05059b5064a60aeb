"""Any environment of ours served as an OpenEnv server (`empo2-host serve-env`), with OpenEnv's own
server classes, so that trainers that speak OpenEnv (TRL, ART, SkyRL) train on it.

    empo2-host serve-env lockbox --port 0          # prints http://127.0.0.1:<port>
    empo2-host train env.name=openenv:http://127.0.0.1:<port>

OpenEnv's `HTTPEnvServer` gives each WebSocket connection (`/ws`) a session of its own: a fresh
environment made by `make_env`, its episode's state kept with the session and closed with it when
the client closes or drops the connection. The stateless `/reset` and `/step` of OpenEnv's HTTP
API make a fresh environment per request, as OpenEnv defines them.

The mapping (docs/environments.md, "OpenEnv"):

- the action is `{"message": <text>}` (`TextAction`, the field OpenEnv's text environments use);
  it goes to `TextEnv.step` as it is: the environment parses and corrects it;
- the observation (`TextObservation`) carries the text, the goal, the valid actions, the score,
  success and the corrected action; `reward` is the score's delta, `done` the episode's end;
- `reset` takes `task`, `variation` and `seed` beside OpenEnv's `seed` and `episode_id`: without
  a task the first one, without a variation the seed picks one of the task's training variations;
- `state` (`TextState`) lists the tasks, their train and test variations and the instructions,
  which the `openenv:` adapter (openenv_client.py) reads when it connects.
"""

from __future__ import annotations

import functools
import socket
import sys
import threading
import uuid
from typing import Any

from openenv.core.env_server import HTTPEnvServer
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, EnvironmentMetadata, Observation, State
from pydantic import Field

from .registry import make_env

DEFAULT_MAX_SESSIONS = 64
SPLITS = ("train", "test")


class TextAction(Action):
    """One action in words, as the policy wrote it."""

    message: str = Field(description="the action, e.g. 'open the door'")


class TextObservation(Observation):
    """What a text environment shows after a reset or a step (reward and done beside it)."""

    text: str = Field(description="the observation in words")
    task: str = Field(default="", description="the task of the episode")
    variation: int = Field(default=0, description="the variation of the episode")
    task_description: str = Field(default="", description="the goal in words")
    valid_actions: list[str] = Field(
        default_factory=list, description="the actions that do something now; empty: not listed"
    )
    score: float = Field(default=0.0, description="the running score in [-100, 100]; rewards are its deltas")
    success: bool = Field(default=False, description="the episode reached its goal")
    corrected_action: str | None = Field(default=None, description="the action played when the text was corrected")


class TextState(State):
    """The session's environment: its tasks and variations, and where the episode stands."""

    environment: str = ""
    tasks: list[str] = Field(default_factory=list)
    variations: dict[str, dict[str, list[int]]] = Field(default_factory=dict)
    instructions: str | None = None
    task: str | None = None
    variation: int | None = None


class ServedEnv(Environment):
    """One session's environment: a `TextEnv` made by `make_env(config)` behind OpenEnv's
    `Environment`."""

    # Each session makes its own environment, so sessions share nothing.
    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self, config):
        super().__init__()
        self.config = config
        self.env = make_env(config)
        self.tasks = self.env.tasks()
        self._variations: dict[str, dict[str, list[int]]] | None = None
        self._state = TextState(environment=config.name, tasks=self.tasks)
        self._started = False

    def variations(self) -> dict[str, dict[str, list[int]]]:
        if self._variations is None:  # asked once: a simulator may load a task to list them
            self._variations = {
                task: {split: self.env.variations(task, split) for split in SPLITS} for task in self.tasks
            }
        return self._variations

    def reset(
        self,
        seed: int | None = None,
        episode_id: str | None = None,
        task: str | None = None,
        variation: int | None = None,
        **kwargs: Any,
    ) -> TextObservation:
        task = self.tasks[0] if task is None else task
        if task not in self.tasks:
            raise ValueError(f"unknown task {task!r}: {self.config.name!r} has {', '.join(self.tasks)}")
        seed = 0 if seed is None else int(seed)
        if variation is None:
            train = self.variations()[task]["train"]
            variation = train[seed % len(train)]
        observation, info = self.env.reset(task, int(variation), seed)
        self._started = True
        self._state = TextState(
            environment=self.config.name,
            tasks=self.tasks,
            task=task,
            variation=variation,
            episode_id=episode_id or str(uuid.uuid4()),
            step_count=0,
            instructions=self._instructions(),
        )
        return self._observation(observation, 0.0, False, info)

    def step(self, action: TextAction, timeout_s: float | None = None, **kwargs: Any) -> TextObservation:
        if not self._started:
            raise ValueError("no episode: send reset before step")
        observation, reward, done, info = self.env.step(action.message)
        self._state.step_count += 1
        return self._observation(observation, reward, done, info)

    @property
    def state(self) -> TextState:
        self._state.variations = self.variations()
        self._state.instructions = self._instructions()
        return self._state

    def get_metadata(self) -> EnvironmentMetadata:
        return EnvironmentMetadata(
            name=self.config.name,
            version="1.0.0",
            description=f"the EMPO² environment {self.config.name!r} (tasks: {', '.join(self.tasks)})",
        )

    def close(self) -> None:
        close = getattr(self.env, "close", None)
        if callable(close):
            close()

    def _instructions(self) -> str | None:
        own = getattr(self.env, "instructions", None)
        return own() if callable(own) else None

    def _observation(self, text: str, reward: float, done: bool, info) -> TextObservation:
        return TextObservation(
            text=text,
            reward=float(reward),
            done=bool(done),
            task=self._state.task or "",
            variation=self._state.variation or 0,
            task_description=info.task_description,
            valid_actions=list(info.valid_actions),
            score=float(info.score),
            success=bool(info.success),
            corrected_action=info.corrected_action,
        )


def build_server(config, max_sessions: int = DEFAULT_MAX_SESSIONS):
    """The FastAPI app serving `config`'s environment, and OpenEnv's `HTTPEnvServer` behind it
    (its `active_sessions` counts the open sessions)."""
    from fastapi import FastAPI

    app = FastAPI(title=f"EMPO² environment {config.name}")
    server = HTTPEnvServer(
        functools.partial(ServedEnv, config),
        TextAction,
        TextObservation,
        max_concurrent_envs=max_sessions,
        env_name=config.name,
        state_cls=TextState,
    )
    server.register_routes(app)
    return app, server


def listening_socket(host: str, port: int) -> socket.socket:
    """A socket bound and listening (port 0: a free one), so the URL is known before serving."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as err:
        sock.close()
        raise OSError(f"cannot listen on {host}:{port}: {err.strerror or err}") from None
    sock.listen(2048)
    return sock


def url_of(sock: socket.socket) -> str:
    host, port = sock.getsockname()[:2]
    return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"


def _uvicorn(app):
    import uvicorn

    return uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on"))


class Served:
    """An app served on a thread of its own (tests, benchmarks): `url`, `sessions`, `stop()`.
    `Served.environment(config)` serves one of our environments."""

    def __init__(self, app, server: HTTPEnvServer | None = None, host: str = "127.0.0.1", port: int = 0):
        self.server = server
        self._socket = listening_socket(host, port)
        self.url = url_of(self._socket)
        self._uvicorn = _uvicorn(app)
        self._thread = threading.Thread(
            target=self._uvicorn.run, kwargs={"sockets": [self._socket]}, name="openenv-server", daemon=True
        )
        self._thread.start()

    @classmethod
    def environment(
        cls, config, host: str = "127.0.0.1", port: int = 0, max_sessions: int = DEFAULT_MAX_SESSIONS
    ) -> Served:
        return cls(*build_server(config, max_sessions), host=host, port=port)

    @property
    def sessions(self) -> int:
        return self.server.active_sessions

    def stop(self) -> None:
        self._uvicorn.should_exit = True
        self._thread.join(timeout=10)
        self._socket.close()


def serve_env(config, host: str, port: int, max_sessions: int) -> int:
    """`empo2-host serve-env`: the URL on stdout, then serve until interrupted."""
    check = make_env(config)  # a name or a factory that does not work: its one sentence, now
    try:
        tasks = check.tasks()
    finally:
        close = getattr(check, "close", None)
        if callable(close):
            close()
    app, _ = build_server(config, max_sessions)
    sock = listening_socket(host, port)
    url = url_of(sock)
    print(url, flush=True)
    print(
        f"serving {config.name!r} (tasks: {', '.join(tasks)}) as an OpenEnv server at {url}, up to "
        f"{max_sessions} sessions; train on it with env.name=openenv:{url}; Ctrl-C stops",
        file=sys.stderr,
        flush=True,
    )
    try:
        _uvicorn(app).run(sockets=[sock])  # Ctrl-C: uvicorn closes the sessions, then raises it again
    except KeyboardInterrupt:
        pass
    print(f"stopped serving {config.name!r}", file=sys.stderr)
    return 0
