"""Environments by name: the one place the trainer turns `env.name` into an environment.

A name is one of (docs/environments.md):

- a built-in family: `builtin`, `scienceworld`, `textworld`;
- a name an installed package declares in the `empo2.environments` entry-point group
  (`lockbox = "lockbox_env:LockboxEnv"` in its pyproject.toml);
- `package.module:factory`, a callable importable from the Python path;
- `gymnasium:<id>`, a registered gymnasium environment with text observations and actions;
- `openenv:<url>`, an OpenEnv server's environment (openenv_client.py).

Every name but the built-in ones is called with `env.kwargs` and wrapped in `PluginEnv`
(plugin.py), which checks what it returns. Benchmarks with heavy dependencies (a JVM, Inform 7,
gymnasium) are imported only when asked for, so the built-in default starts without them.
"""

from __future__ import annotations

import functools
import importlib
import importlib.util
from collections.abc import Callable
from importlib import metadata

from ..config import GYMNASIUM, OPENENV, ConfigError, check_env_name, env_entry_points
from ..one_sentence import sentence
from .base import TextEnv
from .builtin.env import BuiltinEnv
from .plugin import EnvironmentFault, PluginEnv, raised


def _builtin(config) -> TextEnv:
    return BuiltinEnv(max_steps=config.max_steps, correct_actions=config.correct_actions)


def _scienceworld(config) -> TextEnv:
    from .scienceworld import ScienceWorldEnv

    return ScienceWorldEnv(
        max_steps=config.max_steps,
        correct_actions=config.correct_actions,
        per_task_limits=config.step_limits == "per-task",
        simplification=config.simplification,
        correction=config.correction,
    )


def _textworld(config) -> TextEnv:
    from .textworld import TextWorldEnv

    return TextWorldEnv(
        max_steps=config.max_steps,
        correct_actions=config.correct_actions,
        per_task_limits=config.step_limits == "per-task",
        correction=config.correction,
    )


# The built-in families, by the names config.BUILTIN_ENVS accepts (a test holds them equal).
ENVIRONMENTS: dict[str, Callable[..., TextEnv]] = {
    "builtin": _builtin,
    "scienceworld": _scienceworld,
    "textworld": _textworld,
}
# The Python package each built-in family needs beyond the host's own.
_NEEDS = {"scienceworld": "scienceworld", "textworld": "textworld"}


def _builtin_tasks(name: str) -> list[str]:
    """A built-in family's tasks, without starting its simulator."""
    if name == "builtin":
        from .builtin.tasks import TASK_KINDS
    elif name == "scienceworld":
        from .scienceworld import TASKS as TASK_KINDS
    else:
        from .textworld import TASK_KINDS
    return list(TASK_KINDS)


def make_env(config) -> TextEnv:
    """A fresh environment for an `EnvConfig`.

    A name that finds no environment is a ConfigError; an environment whose factory raises or
    makes something without `reset` and `step` is an EnvironmentFault; both are one sentence.
    """
    if config.name.startswith(OPENENV):
        from .openenv_client import open_remote

        return open_remote(config)
    if config.name in ENVIRONMENTS:
        if config.kwargs:
            raise ConfigError(
                f"config key 'env.kwargs' is for environments found by name; the built-in "
                f"{config.name!r} takes its settings from the env keys"
            )
        return ENVIRONMENTS[config.name](config)
    factory = find_factory(config.name)
    return wrap(
        config.name,
        factory,
        config.kwargs,
        max_steps=config.max_steps,
        correct_actions=config.correct_actions,
        step_timeout_s=config.step_timeout_s,
    )


def wrap(name: str, factory: Callable, kwargs: dict, **settings) -> PluginEnv:
    """`factory(**kwargs)` checked and wrapped behind TextEnv."""
    try:
        inner = factory(**kwargs)
    except (EnvironmentFault, ConfigError):  # already one sentence (an OpenEnv server's, openenv_client.py)
        raise
    except Exception as err:  # noqa: BLE001 - a researcher's code: any exception is its fault
        raise EnvironmentFault(raised(name, "its factory", err)) from err
    missing = [m for m in ("reset", "step") if not callable(getattr(inner, m, None))]
    if missing:
        raise EnvironmentFault(
            f"environment {name!r} made a {type(inner).__name__} without "
            f"{' or '.join(missing)}; an environment needs reset and step"
        )
    return PluginEnv(inner, name, **settings)


def find_factory(name: str) -> Callable:
    """The callable that makes the environment `name` (not a built-in one); a ConfigError with
    one sentence when there is none."""
    if name.startswith(OPENENV):
        from .openenv_client import OpenEnvRemote

        return functools.partial(OpenEnvRemote, name, name[len(OPENENV) :])  # make_env: open_remote
    if name.startswith(GYMNASIUM):
        return _gymnasium(name[len(GYMNASIUM) :])
    entry = env_entry_points().get(name)
    if entry is not None:
        try:
            return entry.load()
        except Exception as err:  # noqa: BLE001 - an installed package's import error
            raise ConfigError(
                f"environment {name!r} ({entry.value}, {_origin(entry)}) cannot be loaded: {sentence(err, 200)}"
            ) from None
    module, sep, attr = name.partition(":")
    if not (sep and module and attr):
        check_env_name(name)  # says why
    try:
        found = importlib.import_module(module)
    except Exception as err:  # noqa: BLE001 - ImportError or whatever the module raised
        raise ConfigError(
            f"environment {name!r} cannot be imported: {type(err).__name__}: {sentence(err, 200)}"
        ) from None
    for part in attr.split("."):
        if not hasattr(found, part):
            raise ConfigError(f"environment {name!r} cannot be found: module {module!r} has no {attr!r}")
        found = getattr(found, part)
    if not callable(found):
        raise ConfigError(f"environment {name!r} is a {type(found).__name__}, not a factory to call")
    return found


def _gymnasium(env_id: str) -> Callable:
    try:
        import gymnasium
    except ImportError:
        raise ConfigError(
            f"environment 'gymnasium:{env_id}' needs the gymnasium package, which is "
            "not installed (pip install gymnasium)"
        ) from None
    if env_id not in gymnasium.registry:
        raise ConfigError(
            f"environment 'gymnasium:{env_id}' is not registered with gymnasium "
            "(import the package that registers it from an entry point or "
            "module:factory instead)"
        )
    return lambda **kwargs: gymnasium.make(env_id, **kwargs)


def _origin(entry: metadata.EntryPoint) -> str:
    dist = entry.dist
    return f"package {dist.name} {dist.version}" if dist is not None else "an installed package"


def list_environments() -> list[dict]:
    """What `env.name` can name here: the built-in families and every installed entry point,
    each as {name, source, tasks, error} (error: why it cannot be used now, else None).
    An entry point's environment is made once (without env.kwargs) to ask for its tasks."""
    rows = []
    for name in ENVIRONMENTS:
        needs = _NEEDS.get(name)
        error = f"the {needs} package is not installed" if needs and importlib.util.find_spec(needs) is None else None
        rows.append({"name": name, "source": "built in", "tasks": _builtin_tasks(name), "error": error})
    for name, entry in sorted(env_entry_points().items()):
        row = {"name": name, "source": f"{entry.value} ({_origin(entry)})", "tasks": [], "error": None}
        try:
            env = wrap(name, find_factory(name), {}, max_steps=1)
            try:
                row["tasks"] = env.tasks()
            finally:
                env.close()
        except (ConfigError, EnvironmentFault) as err:
            row["error"] = sentence(err)
        rows.append(row)
    return rows


def tasks_of(config, env: TextEnv) -> list[str]:
    """The tasks a run trains on: env.tasks, or when it is empty every task of the environment."""
    return list(config.tasks) if config.tasks else env.tasks()
