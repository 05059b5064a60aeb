"""Real ScienceWorld episodes through the adapter: gold paths, correction, limits, splits.

One simulator (one JVM, about 2 s to start) serves the whole module; each test resets it.
"""

from __future__ import annotations

import pytest

from empo2.config import load_config
from empo2.envs.scienceworld import MAX_STEPS, PAPER_TASKS, ScienceWorldEnv
from empo2.policy.prompting import SYSTEM_PROMPT, system_prompt_for
from text_game_support import check_splits, play, settings

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def sciworld():
    env = ScienceWorldEnv(max_steps=30, per_task_limits=False)
    yield env
    env.close()


@pytest.mark.parametrize(
    "task",
    ["find-non-living-thing", "power-component", "chemistry-mix-paint-secondary-color", "lifespan-longest-lived"],
)
def test_the_gold_action_sequence_reaches_full_score(sciworld, task):
    variation = sciworld.variations(task, "train")[0]
    gold = sciworld.gold_actions(task, variation)
    obs, info = sciworld.reset(task, variation)
    assert obs.startswith("This room is called") and info.task_description.startswith("Your task is")
    total, info, done = play(sciworld, gold)
    assert done and info.success and info.score == 100.0
    assert total == 100.0  # rewards are score deltas
    assert info.corrected_action is None


def test_text_the_simulator_does_not_understand_is_corrected(sciworld):
    sciworld.reset("power-component", 0)
    obs, _, done, info = sciworld.step("please go to the workshop")
    assert info.corrected_action == "go to workshop" and obs == "You move to the workshop."
    assert not done and info.score >= 0
    # Text it understands is executed as it is, even when it is not in the listed actions.
    obs, _, _, info = sciworld.step("open door to hallway")
    assert info.corrected_action is None and "already open" in obs


def test_listed_correction_is_the_reference_code_s(sciworld):
    listed = ScienceWorldEnv(max_steps=30, correction="listed")
    try:
        listed.reset("power-component", 0)
        assert "go to workshop" in listed.valid_actions()
        _, _, _, info = listed.step("go to workshop")
        assert info.corrected_action is None
        before = list(listed.valid_actions())
        assert "open door to hallway" not in before  # it is open already, so not listed
        _, _, _, info = listed.step("open door to hallway")
        assert info.corrected_action in before  # replaced by a listed action, as the reference does
    finally:
        listed.close()


def test_the_step_limit_ends_the_episode(sciworld):
    with settings(sciworld, per_task_limits=True):
        sciworld.reset("lifespan-longest-lived", 0)
        assert MAX_STEPS["lifespan-longest-lived"] == 10
        for step in range(1, 11):
            _, _, done, info = sciworld.step("look around")
            assert done == (step == 10), step
        assert not info.success and info.extra["steps"] == 10
        _, reward, done, _ = sciworld.step("look around")  # stepping past the end changes nothing
        assert done and reward == 0.0
    with settings(sciworld, max_steps=3):
        sciworld.reset("power-component", 0)
        assert [sciworld.step("look around")[2] for _ in range(3)] == [False, False, True]


def test_focusing_on_the_wrong_object_fails_the_task(sciworld):
    sciworld.reset("power-component", 0)
    _, reward, done, info = sciworld.step("focus on agent")
    assert done and not info.success and info.score == -100.0 and reward == -100.0


def test_train_and_test_variations_are_disjoint_and_sized_as_the_paper(sciworld):
    check_splits(sciworld, "use-thermometer")


def test_all_table_1_tasks_are_selectable_by_name(sciworld):
    assert len(PAPER_TASKS) == len(set(PAPER_TASKS)) == 18
    assert set(PAPER_TASKS) <= set(sciworld.tasks()) and len(sciworld.tasks()) == 30
    config = load_config({"env": {"name": "scienceworld", "tasks": list(PAPER_TASKS), "step_limits": "per-task"}})
    assert config.env.name == "scienceworld"
    with pytest.raises(ValueError, match="unknown ScienceWorld task"):
        sciworld.reset("power-device", 0)


def test_the_instructions_carry_the_paper_prompt_s_content(sciworld):
    text = system_prompt_for(sciworld)
    assert text != SYSTEM_PROMPT
    for needle in (
        "focus on OBJ",
        "wrong object",
        "teleport to LOC",
        "connect OBJ to OBJ",
        "Explore",
        "a different task",
    ):
        assert needle in text, needle


def test_a_training_run_on_scienceworld_keeps_its_simulators_and_budget(tmp_path, tiny_policy, embedder):
    from conftest import tiny_run_overrides
    from empo2.run_folder.folder import RunFolder
    from empo2.training.trainer import Trainer

    config = load_config(
        tiny_run_overrides(
            tiny_policy,
            iterations=2,
            **{
                "env.name": "scienceworld",
                "env.tasks": ["find-non-living-thing"],
                "env.max_steps": 3,
                "env.workers": 2,
                "algo.batch_tasks": 1,
                "policy.max_sequence_tokens": 640,
                "policy.history_steps": 10,
                "policy.observation_words": 30,
                "eval.every": 0,
            },
        )
    )
    folder = RunFolder.create(tmp_path, "sw", config.to_dict())
    trainer = Trainer(config, folder, embedder=embedder)
    try:
        trainer.run()
        assert len(trainer.envs) == 1 * 2  # B×N simulators, started once for the whole run
    finally:
        trainer.close()
    assert folder.state()["state"] == "finished" and [m["iteration"] for m in folder.metrics()] == [1, 2]
    metrics = folder.metrics()[-1]
    for phase in ("generation", "environment", "retrieval", "prompting"):
        assert f"time/rollout/{phase}" in metrics
    steps = [s for summary in folder.trajectory_summaries() for s in folder.trajectory(summary["id"])["steps"]]
    assert steps and all(len(s["prompt_ids"]) + 6 <= 640 for s in steps)
    assert all("focus on" in s["prompt"] for s in steps)  # the ScienceWorld instructions
