"""`env.name=openenv:<url>`: an OpenEnv server's environment behind our TextEnv contract, through
OpenEnv's own client (`GenericEnvClient`: one WebSocket session, `reset`/`step`/`state`).

Each environment of the run's pool is one session on the server, so every episode keeps its
state there. The mapping (docs/environments.md, "OpenEnv"):

- the action goes as `{<action_field>: <text>}`, "message" unless env.kwargs says otherwise;
- the observation's text is its `observation_field` (env.kwargs), else the first of `text`,
  `prompt`, `message` it has, else its one text field; the goal is `task_description`, the valid
  actions `valid_actions` or `legal_actions` (optional), `score` and `success` are read when
  there; a reward of None counts 0;
- the tasks, variations and instructions come from the session's `state` when the server lists
  them (`empo2-host serve-env` does, openenv_server.py); otherwise one task and seeds as
  variations, as for any environment found by name: variation v resets with seed v.

What goes wrong between the two ends — nothing listening, a server that is not OpenEnv, an
error answered, a session dropped mid-episode, an observation without text — is an
`EnvironmentFault` of one sentence that names the environment and the URL. env.step_timeout_s
is the longest the server may take to answer a reset or a step.
"""

from __future__ import annotations

import numbers
import re

from ..config import ConfigError, check_openenv_url
from .plugin import DEFAULT_TASK, SEED_VARIATIONS, EnvironmentFault, PluginEnv

TEXT_FIELDS = ("text", "prompt", "message")
INSTALL = "pip install --require-hashes -r host/requirements-openenv.lock"


class OpenEnvRemote:
    """One session with the OpenEnv server at `url`, with the methods PluginEnv asks for.

    action_field: the action's field that carries the text.
    observation_field: the observation's field that carries the text ('' finds it).
    message_timeout_s: the longest a reset or a step may take on the server.
    """

    def __init__(
        self,
        name: str,
        url: str,
        action_field: str = "message",
        observation_field: str = "",
        message_timeout_s: float = 60.0,
        connect_timeout_s: float = 10.0,
    ):
        check_openenv_url(url)
        try:
            from openenv.core.generic_client import GenericEnvClient
        except ImportError:
            raise ConfigError(
                f"environment {name!r} needs OpenEnv's package openenv, which is not installed ({INSTALL})"
            ) from None
        self.name, self.url = name, url.rstrip("/")
        self.action_field, self.observation_field = action_field, observation_field
        self._client = GenericEnvClient(
            base_url=self.url, connect_timeout_s=connect_timeout_s, message_timeout_s=message_timeout_s or 1e9
        ).sync()
        self._call("connect", self._client.connect)
        state = self._call("state", self._client.state)
        if not isinstance(state, dict):
            raise self._fault(f"answered state with {type(state).__name__}, not an object: not an OpenEnv server")
        self._tasks = _names(state.get("tasks"))
        self._variations = state.get("variations") if isinstance(state.get("variations"), dict) else {}
        self._instructions = state.get("instructions") if isinstance(state.get("instructions"), str) else None
        self._in_episode = False

    # -- what PluginEnv calls ----------------------------------------------------------------

    def tasks(self) -> list[str]:
        return list(self._tasks) or [DEFAULT_TASK]

    def variations(self, task: str, split: str) -> list[int]:
        listed = self._variations.get(task, {})
        if split == "all" and isinstance(listed, dict) and "train" in listed:
            return list(listed.get("train", [])) + list(listed.get("test", []))
        return list(listed.get(split, [])) if isinstance(listed, dict) and listed else list(SEED_VARIATIONS[split])

    def instructions(self) -> str | None:
        return self._instructions

    def reset(self, task: str, variation: int, seed: int):
        if self._variations.get(task):
            options = {"task": task, "variation": variation, "seed": seed}
        else:  # the server lists no variations: seeds play as variations
            options = {"seed": variation} | ({"task": task} if self._tasks else {})
        result = self._call("reset", lambda: self._client.reset(**options))
        self._in_episode = True
        observation, info = self._read(result)
        return observation, info

    def step(self, action: str):
        socket = self._socket()
        if self._in_episode and (socket is None or _closed(socket)):
            raise self._fault("closed the session in the middle of an episode")
        result = self._call("step", lambda: self._client.step({self.action_field: action}))
        if self._socket() is not socket:  # OpenEnv's client reconnected: a new, empty session
            raise self._fault("closed the session in the middle of an episode")
        observation, info = self._read(result)
        reward = 0.0 if result.reward is None else result.reward
        return observation, reward, bool(result.done), info

    def close(self) -> None:
        try:
            self._client.close()
        except Exception:  # noqa: BLE001 - a server already gone has nothing left to close
            pass

    # -- the wire ----------------------------------------------------------------------------

    def _socket(self):
        return getattr(self._client.async_client, "_ws", None)

    def _call(self, what: str, call):
        try:
            return call()
        except EnvironmentFault:
            raise
        except ConnectionError as err:
            raise self._fault(_why_unreachable(err), verb="cannot be reached at") from None
        except RuntimeError as err:
            text = str(err)
            if text.startswith("Server error: "):  # what the server answered, said by OpenEnv's client
                answered = re.sub(r" \(code: [A-Z_]+\)$", "", text[len("Server error: ") :])  # OpenEnv's client adds it
                raise self._fault(f"answered {what} with an error: {answered}") from None
            raise self._fault(f"failed in {what}: {type(err).__name__}: {text}") from None
        except TimeoutError:
            raise self._fault(f"did not answer {what} in time (env.step_timeout_s)") from None
        except Exception as err:  # noqa: BLE001 - a closed socket, a frame that is not JSON, ...
            if type(err).__name__.startswith("ConnectionClosed"):  # websockets' own
                raise self._fault(f"closed the connection during {what}") from None
            detail = f": {str(err).splitlines()[0][:200]}" if str(err).strip() else ""
            raise self._fault(f"failed in {what}: {type(err).__name__}{detail}") from None

    def _fault(self, what: str, verb: str = "at") -> EnvironmentFault:
        if verb == "at":
            return EnvironmentFault(f"environment {self.name!r}: the OpenEnv server at {self.url} {what}")
        return EnvironmentFault(f"environment {self.name!r} {verb} {self.url}: {what}")

    def _read(self, result) -> tuple[str, dict]:
        """The observation's text and its info (the fields of StepInfo it carries)."""
        observation = result.observation
        if not isinstance(observation, dict):
            raise self._fault(f"sent an observation of type {type(observation).__name__}, not an object")
        text = self._text(observation)
        info = {"task_description": observation.get("task_description") or ""}
        valid = observation.get("valid_actions") or observation.get("legal_actions")
        if isinstance(valid, list) and valid and all(isinstance(a, str) for a in valid):
            info["valid_actions"] = valid
        score = observation.get("score")
        if isinstance(score, numbers.Real) and not isinstance(score, bool):
            info["score"] = float(score)
        success = observation.get("success", (result.metadata or {}).get("success"))
        if isinstance(success, bool):
            info["success"] = success
        if isinstance(observation.get("corrected_action"), str):
            info["extra"] = {"served_corrected_action": observation["corrected_action"]}
        return text, info

    def _text(self, observation: dict) -> str:
        if self.observation_field:
            if not isinstance(observation.get(self.observation_field), str):
                raise self._fault(
                    f"sent an observation without the text field {self.observation_field!r} "
                    f"(env.kwargs observation_field); its fields: {_fields(observation)}"
                )
            return observation[self.observation_field]
        for field in TEXT_FIELDS:
            if isinstance(observation.get(field), str):
                return observation[field]
        texts = [k for k, v in observation.items() if isinstance(v, str)]
        if len(texts) == 1:
            return observation[texts[0]]
        raise self._fault(
            f"sent an observation with no text field of {', '.join(TEXT_FIELDS)} "
            f"(its fields: {_fields(observation)}); name one with env.kwargs observation_field"
        )


def _names(value) -> list[str]:
    return list(value) if isinstance(value, list) and all(isinstance(v, str) for v in value) else []


def _fields(observation: dict) -> str:
    return ", ".join(sorted(observation)) or "none"


def _closed(socket) -> bool:
    state = getattr(socket, "state", None)
    return getattr(state, "name", "OPEN") in ("CLOSING", "CLOSED")


def _why_unreachable(err: ConnectionError) -> str:
    """Why OpenEnv's client could not open its WebSocket, in words."""
    cause = err.__cause__
    status = getattr(getattr(cause, "response", None), "status_code", None)
    if status is not None:
        return f"it answered HTTP {status} where an OpenEnv server opens its WebSocket (/ws): not an OpenEnv server"
    if type(cause).__name__ == "InvalidMessage":  # websockets': no HTTP/1.1 answer to the handshake
        return "it did not answer the WebSocket handshake at /ws with HTTP/1.1: not an OpenEnv server"
    if isinstance(cause, ConnectionRefusedError) or "Connect call failed" in str(cause):
        return "nothing listens there (connection refused): is the server running?"
    if isinstance(cause, TimeoutError):
        return "no answer within the connect timeout"
    if cause is not None:
        return f"{type(cause).__name__}: {str(cause).splitlines()[0][:200] if str(cause) else ''}".rstrip(": ")
    return str(err)[:200]


class OpenEnvPluginEnv(PluginEnv):
    """PluginEnv's checks and defaults over an `OpenEnvRemote`, whose faults are already their
    sentences (PluginEnv would say them again as what the environment raised)."""

    def _call(self, what: str, method, *args, **kwargs):
        try:
            return method(*args, **kwargs)
        except EnvironmentFault:
            raise
        except Exception:  # noqa: BLE001 - anything else is PluginEnv's to say
            return super()._call(what, method, *args, **kwargs)


def open_remote(config) -> OpenEnvPluginEnv:
    """The environment `env.name=openenv:<url>` names: one session with the server. env.kwargs
    may set action_field and observation_field; env.step_timeout_s bounds each answer (OpenEnv's
    client keeps the time, so no thread of PluginEnv's is needed)."""
    unknown = set(config.kwargs) - {"action_field", "observation_field"}
    if unknown:
        raise ConfigError(
            f"config key 'env.kwargs' of an OpenEnv server takes action_field and "
            f"observation_field, not {', '.join(sorted(unknown))}"
        )
    remote = OpenEnvRemote(
        config.name, config.name.split(":", 1)[1], message_timeout_s=config.step_timeout_s, **config.kwargs
    )
    return OpenEnvPluginEnv(
        remote, config.name, max_steps=config.max_steps, correct_actions=config.correct_actions, step_timeout_s=0.0
    )
