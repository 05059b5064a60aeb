"""A built policy's folder is built once however many processes ask for it at the same time, and
its recipe says how to cut a run's prompts."""

from __future__ import annotations

import json
import threading
import time

import pytest

from empo2.policy.saved_folder import BUILD_REPORT, build_once, prompt_shape_difference, prompt_shape_overrides


def test_two_callers_at_once_build_the_folder_once_and_both_get_it(tmp_path):
    path = tmp_path / "cache" / "policy"
    builds: list[str] = []

    def build(destination):
        builds.append(threading.current_thread().name)
        time.sleep(0.3)  # the second caller arrives while the first builds
        destination.mkdir(parents=True)
        (destination / BUILD_REPORT).write_text("{}\n")

    got: list = []
    callers = [
        threading.Thread(target=lambda: got.append(build_once(path, build)), name=f"caller-{k}") for k in range(2)
    ]
    for caller in callers:
        caller.start()
    for caller in callers:
        caller.join()
    assert len(builds) == 1 and got == [path, path]
    assert build_once(path, build) == path and len(builds) == 1  # cached: no build


def test_a_build_that_fails_leaves_no_folder_and_the_next_caller_builds(tmp_path):
    path = tmp_path / "policy"

    def broken(destination):
        raise RuntimeError("the build broke")

    with pytest.raises(RuntimeError, match="the build broke"):
        build_once(path, broken)
    assert not (path / BUILD_REPORT).exists()
    assert build_once(path, lambda d: (d.mkdir(), (d / BUILD_REPORT).write_text("{}\n"))) == path


def test_a_policys_recipe_gives_the_overrides_that_cut_prompts_where_its_demonstrations_were(tmp_path):
    built = tmp_path / "built"
    built.mkdir()
    (built / BUILD_REPORT).write_text(
        json.dumps({"recipe": {"epochs": 2, "history_steps": 3, "observation_words": 50}})
    )
    assert prompt_shape_overrides(built) == ["policy.history_steps=3", "policy.observation_words=50"]
    assert prompt_shape_difference(built, 3, 50) is None
    assert "policy.observation_words 50 (this run: 10)" in prompt_shape_difference(built, 3, 10)
    elsewhere = tmp_path / "elsewhere"  # a run's checkpoint or a model from elsewhere: no recipe
    elsewhere.mkdir()
    assert prompt_shape_overrides(elsewhere) == [] and prompt_shape_difference(elsewhere, 3, 10) is None
