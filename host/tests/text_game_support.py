"""What the ScienceWorld and TextWorld adapter tests share: playing actions, temporary settings
of the module's one environment, and the checks every text game's splits must pass."""

from __future__ import annotations

from contextlib import contextmanager


def play(env, actions):
    """Steps through `actions` until the episode ends: (total reward, last info, done)."""
    total, info, done = 0.0, None, False
    for action in actions:
        _, reward, done, info = env.step(action)
        total += reward
        if done:
            break
    return total, info, done


@contextmanager
def settings(env, **values):
    """Sets attributes of a shared environment (max_steps, per_task_limits) for one block."""
    before = {name: getattr(env, name) for name in values}
    for name, value in values.items():
        setattr(env, name, value)
    try:
        yield env
    finally:
        for name, value in before.items():
            setattr(env, name, value)


def check_splits(env, task: str) -> None:
    """The paper's sizes (5 training, 20 test variations), disjoint, and "all" is both."""
    train, test = env.variations(task, "train"), env.variations(task, "test")
    assert len(train) == 5 and len(test) == 20 and not set(train) & set(test)
    assert env.variations(task, "all") == train + test
