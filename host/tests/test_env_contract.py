"""The public environment contract: an environment found by name, with its defaults and checks
(envs/plugin.py, envs/registry.py, docs/environments.md)."""

from __future__ import annotations

import json
import logging
import sys
import textwrap
import threading
import time

import pytest

from empo2.cli import main
from empo2.config import ConfigError, load_config
from empo2.envs import DEFAULT_TASK, SEED_VARIATIONS, StepInfo, TextEnv
from empo2.envs.plugin import EnvironmentFault, call_each
from empo2.envs.registry import list_environments, make_env, wrap
from server_support import check, connect, make_host  # noqa: F401 - check is a fixture


class Corridor:
    """The smallest environment: reset and step, nothing else (the docs' opening example)."""

    def reset(self, seed):
        self.length, self.position = 2 + seed % 3, 0
        return f"a corridor of {self.length} steps ."

    def step(self, action):
        self.position += action == "walk"
        done = self.position == self.length
        return f"you are at step {self.position} .", float(done), done, {"success": done}


class Listed(Corridor):
    """Tasks, variations, valid actions in a dict, gymnasium's five-tuple."""

    def tasks(self):
        return ["short", "long"]

    def variations(self, task, split):
        return {"train": [1, 2], "test": [3], "all": [1, 2, 3]}[split]

    def reset(self, task, variation, seed):
        self.seen = (task, variation, seed)
        super().reset(variation)
        return "start .", {"task_description": f"walk the {task} corridor", "valid_actions": ["walk", "wait"]}

    def step(self, action):
        obs, reward, done, info = super().step(action)
        return obs, reward, done, False, {**info, "valid_actions": ["walk", "wait"], "score": 50.0 * self.position}


def env_config(name, **settings):
    return load_config("builtin", [f"env.name={name}"] + [f"{k}={json.dumps(v)}" for k, v in settings.items()]).env


def test_an_environment_with_reset_and_step_alone_gets_one_task_and_seeds_as_variations(caplog):
    env: TextEnv = wrap("corridor", Corridor, {}, max_steps=10)
    assert env.tasks() == [DEFAULT_TASK]
    assert env.variations(DEFAULT_TASK, "train") == SEED_VARIATIONS["train"]
    assert not set(SEED_VARIATIONS["train"]) & set(SEED_VARIATIONS["test"])
    # Variation 4 is seed 4: a corridor of 2 + 4 % 3 = 3 steps, whatever seed the trainer passes.
    with caplog.at_level(logging.INFO, logger="empo2.envs.plugin"):
        obs, info = env.reset(DEFAULT_TASK, 4, seed=0)
        assert obs == "a corridor of 3 steps ." and info.valid_actions == [] and info.score == 0
        # No valid actions: the text goes to the environment as written (its first line: the
        # executed action), no correction, and the log says so once.
        for _ in range(2):
            obs, reward, done, info = env.step("walk\nthen more")
            assert info.corrected_action == "walk" and not done
        obs, reward, done, info = env.step("walk")
    assert (reward, done, info.success, info.score) == (1.0, True, True, 1.0)  # score: the rewards' sum
    said = [r.getMessage() for r in caplog.records if "lists no valid actions" in r.getMessage()]
    assert len(said) == 1 and "'corridor'" in said[0]
    env.reset(DEFAULT_TASK, 4, seed=0)
    assert env.step("jump")[3].corrected_action is None  # still no correction


def test_listed_tasks_variations_and_valid_actions_are_used_and_invalid_actions_corrected():
    env = wrap("listed", Listed, {}, max_steps=10, correct_actions=True)
    assert env.tasks() == ["short", "long"] and env.variations("long", "test") == [3]
    obs, info = env.reset("long", 3, seed=7)  # a corridor of 2 + 3 % 3 = 2 steps
    assert env.inner.seen == ("long", 3, 7)  # its own variations: the trainer's seed is passed on
    assert info.task_description == "walk the long corridor" and info.valid_actions == ["walk", "wait"]
    obs, reward, done, info = env.step("Action: walk quickly.")
    assert info.corrected_action == "walk" and env.inner.position == 1
    assert (info.score, done) == (50.0, False)
    obs, reward, done, info = env.step("walk")
    assert done and info.success and info.score == 100.0 and info.corrected_action is None


def test_the_step_limit_ends_an_episode_the_environment_does_not_end():
    env = wrap("corridor", Corridor, {}, max_steps=2)
    env.reset(DEFAULT_TASK, 2)  # 4 steps long
    assert [env.step("wait")[2] for _ in range(2)] == [False, True]
    assert env.step("walk")[:3] == ("the episode is over .", 0.0, True)


def test_module_factory_names_and_kwargs(tmp_path, monkeypatch):
    (tmp_path / "my_corridor.py").write_text(
        textwrap.dedent("""
        class Maker:
            def __init__(self, size=1):
                self.size = size
            def reset(self, seed):
                return "x" * self.size
            def step(self, action):
                return "y", 0.0, True, None
        """)
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    env = make_env(env_config("my_corridor:Maker", **{"env.kwargs": {"size": 3}}))
    assert env.reset(DEFAULT_TASK, 0)[0] == "xxx" and env.name == "my_corridor:Maker"
    with pytest.raises(ConfigError, match="'my_corridor:Nope' cannot be found: module 'my_corridor' has no 'Nope'"):
        make_env(env_config("my_corridor:Nope"))
    with pytest.raises(ConfigError, match="'no_such_module_x:f' cannot be imported: ModuleNotFoundError"):
        make_env(env_config("no_such_module_x:f"))
    with pytest.raises(ConfigError, match="env.kwargs"):
        make_env(env_config("builtin", **{"env.kwargs": {"size": 3}}))


def test_an_unknown_name_is_one_sentence_and_other_names_clear_the_builtin_tasks():
    with pytest.raises(ConfigError, match=r"^config key 'env.name' names no environment: 'alfworld'"):
        load_config("builtin", ["env.name=alfworld"])
    with pytest.raises(ConfigError, match="an OpenEnv server's URL starts with http://"):
        load_config("builtin", ["env.name=openenv:ftp://localhost:1"])
    # The preset's tasks are the built-in worlds': another environment trains on all of its own.
    assert env_config("my_module:make").tasks == []
    assert env_config("my_module:make", **{"env.tasks": ["a"]}).tasks == ["a"]
    assert load_config({"env": {"name": "my_module:make"}}).env.tasks == []
    assert load_config("builtin").env.tasks == ["power-device", "grow-plant", "heat-food"]


def _installed(tmp_path, monkeypatch, name, value):
    """A distribution on sys.path that declares one entry point, as pip would install it."""
    dist = tmp_path / "site" / "corridor_envs-1.2.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: corridor-envs\nVersion: 1.2\n")
    (dist / "entry_points.txt").write_text(f"[empo2.environments]\n{name} = {value}\n")
    (tmp_path / "site" / "corridor_pkg.py").write_text(
        textwrap.dedent("""
        from empo2.envs import StepInfo
        class Corridor:
            def tasks(self):
                return ["walk-it"]
            def reset(self, task, seed):
                return "start .", StepInfo("walk", ["walk"])
            def step(self, action):
                return "end .", 100.0, True, StepInfo("walk", [], 100.0, True)
        """)
    )
    monkeypatch.syspath_prepend(str(tmp_path / "site"))


def test_an_entry_point_names_an_environment_and_envs_lists_it(tmp_path, monkeypatch, capsys):
    _installed(tmp_path, monkeypatch, "corridor", "corridor_pkg:Corridor")
    config = env_config("corridor")
    assert config.tasks == []
    env = make_env(config)
    assert env.tasks() == ["walk-it"] and env.step("x")[0] == "the episode is over ."
    env.reset("walk-it", 0, seed=0)
    assert env.step("walk")[1:3] == (100.0, True)

    rows = {row["name"]: row for row in list_environments()}
    assert rows["corridor"] == {
        "name": "corridor",
        "source": "corridor_pkg:Corridor (package corridor-envs 1.2)",
        "tasks": ["walk-it"],
        "error": None,
    }
    assert rows["builtin"]["tasks"][:3] == ["power-device", "grow-plant", "heat-food"]
    assert main(["envs", "--json"]) == 0
    printed = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert {
        "name": "corridor",
        "source": "corridor_pkg:Corridor (package corridor-envs 1.2)",
        "tasks": ["walk-it"],
        "error": None,
    } in printed
    assert main(["envs"]) == 0
    assert "corridor  corridor_pkg:Corridor (package corridor-envs 1.2)  tasks: walk-it" in capsys.readouterr().out


def test_a_broken_entry_point_is_listed_with_its_sentence(tmp_path, monkeypatch):
    _installed(tmp_path, monkeypatch, "broken", "corridor_pkg:Missing")
    row = {r["name"]: r for r in list_environments()}["broken"]
    assert row["tasks"] == [] and row["error"].startswith("environment 'broken' (corridor_pkg:Missing")
    with pytest.raises(ConfigError, match="cannot be loaded"):
        make_env(env_config("broken"))


def test_gymnasium_ids_make_environments_through_gymnasium(tmp_path, monkeypatch):
    """gymnasium:<id> calls gymnasium.make(id, **env.kwargs) and reads its five-tuples. A
    stand-in module with gymnasium's `make` and `registry` plays the package (it is not a
    dependency of the host)."""
    (tmp_path / "gymnasium.py").write_text(
        textwrap.dedent("""
        made = []
        class Echo:
            def __init__(self, word="echo"):
                self.word = word
            def reset(self, *, seed=None, options=None):
                return f"{self.word} {seed}", {}
            def step(self, action):
                return action, 1.0, True, False, {"success": True}
        registry = {"Echo-v0": Echo}
        def make(env_id, **kwargs):
            made.append((env_id, kwargs))
            return registry[env_id](**kwargs)
        """)
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "gymnasium", raising=False)
    env = make_env(env_config("gymnasium:Echo-v0", **{"env.kwargs": {"word": "hello"}}))
    assert sys.modules["gymnasium"].made == [("Echo-v0", {"word": "hello"})]
    assert env.reset(DEFAULT_TASK, 3, seed=0)[0] == "hello 3"
    assert env.step("hi")[:3] == ("hi", 1.0, True) and env.step("x")[2]
    with pytest.raises(ConfigError, match="'gymnasium:Nope-v0' is not registered with gymnasium"):
        make_env(env_config("gymnasium:Nope-v0"))


def test_the_contract_is_exported_from_empo2_envs():
    import empo2.envs as envs
    from empo2.config import BUILTIN_ENVS
    from empo2.envs.registry import ENVIRONMENTS

    assert tuple(ENVIRONMENTS) == BUILTIN_ENVS
    for name in ("TextEnv", "StepInfo", "EnvironmentFault", "SCORE_MIN", "SCORE_MAX"):
        assert name in envs.__all__ and hasattr(envs, name)
    assert StepInfo("goal", ["a"]).score == 0.0


def test_env_list_gives_the_extension_what_envs_lists(tmp_path, monkeypatch, check):
    """The protocol's env.list: the same rows as `empo2-host envs`, checked against the schema."""
    _installed(tmp_path, monkeypatch, "corridor", "corridor_pkg:Corridor")
    (tmp_path / "runs").mkdir()
    host = make_host([tmp_path / "runs"])
    try:
        with connect(host, check) as client:
            environments = client.request("env.list")["environments"]
    finally:
        host.stop()
    assert environments == list_environments()
    assert {
        "name": "corridor",
        "source": "corridor_pkg:Corridor (package corridor-envs 1.2)",
        "tasks": ["walk-it"],
        "error": None,
    } in environments


class Sleeper(Corridor):
    """Steps take `pause` seconds; `stuck` never returns from its second step."""

    def __init__(self, pause=0.0, stuck=False):
        self.pause, self.stuck, self.steps = pause, stuck, 0

    def step(self, action):
        self.steps += 1
        if self.stuck and self.steps == 2:
            threading.Event().wait()
        time.sleep(self.pause)
        return super().step(action)


def test_a_turn_of_timed_environments_goes_over_in_one_hand_off_and_keeps_each_call_timed():
    """With env.step_timeout_s, a rollout turn runs on one environment thread (envs/plugin.py,
    call_each): the results come in order, and one call past the limit still ends the turn in
    the sentence naming the environment and the step, however short the others are."""
    envs = [wrap(f"sleeper-{i}", Sleeper, {"pause": 0.01}, max_steps=9, step_timeout_s=0.5) for i in range(4)]
    for env in envs:
        env.reset("main", 0)
    threads = []

    def step(env, action):
        threads.append(threading.get_ident())
        return env.step(action)

    results = call_each(step, envs, ["walk", "wait", "walk", "wait"])
    assert [r[0] for r in results] == [
        "you are at step 1 .",
        "you are at step 0 .",
        "you are at step 1 .",
        "you are at step 0 .",
    ]
    assert len(set(threads)) == 1 and threads[0] != threading.get_ident()

    # 4 calls of 0.2 s each: a turn of 0.8 s under a 0.5 s limit per call is not a fault
    slow = [wrap(f"slow-{i}", Sleeper, {"pause": 0.2}, max_steps=9, step_timeout_s=0.5) for i in range(4)]
    for env in slow:
        env.reset("main", 0)
    assert len(call_each(lambda env, a: env.step(a), slow, ["wait"] * 4)) == 4

    stuck = [
        wrap("quick", Sleeper, {}, max_steps=9, step_timeout_s=0.3),
        wrap("stuck", Sleeper, {"stuck": True}, max_steps=9, step_timeout_s=0.3),
    ]
    for env in stuck:
        env.reset("main", 0)
    call_each(lambda env, a: env.step(a), stuck, ["wait", "wait"])
    with pytest.raises(
        EnvironmentFault,
        match=r"^environment 'stuck' took more than 0.3 s in step "
        r"\(env.step_timeout_s\)$",
    ):
        call_each(lambda env, a: env.step(a), stuck, ["wait", "wait"])
    with pytest.raises(EnvironmentFault, match="still inside a call"):
        call_each(lambda env, a: env.step(a), stuck, ["wait", "wait"])


def test_an_exception_inside_a_timed_turn_is_the_environments_sentence():
    class Breaks(Corridor):
        def step(self, action):
            raise KeyError("the map has no such room")

    envs = [
        wrap("fine", Corridor, {}, max_steps=9, step_timeout_s=5),
        wrap("breaks", Breaks, {}, max_steps=9, step_timeout_s=5),
    ]
    for env in envs:
        env.reset("main", 0)
    with pytest.raises(EnvironmentFault, match="^environment 'breaks' raised KeyError in step"):
        call_each(lambda env, a: env.step(a), envs, ["walk", "walk"])
