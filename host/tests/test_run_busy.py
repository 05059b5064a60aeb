"""The refusal a second run meets names the action that clears the way for what was asked."""

from __future__ import annotations

from empo2.server.runs.run_manager import busy_sentence


def test_a_paused_run_in_the_way_of_a_new_run_is_to_be_stopped_not_paused():
    said = busy_sentence("r1", "paused", beside_paused=False)
    assert "paused" in said and "stop it" in said and "pause" not in said.replace("paused", "")


def test_a_training_run_in_the_way_of_a_new_run_is_to_be_stopped():
    said = busy_sentence("r1", "running", beside_paused=False)
    assert "'r1'" in said and "stop it" in said and "pause" not in said


def test_a_training_run_in_the_way_of_a_rerun_may_be_paused():
    said = busy_sentence("r1", "running", beside_paused=True)
    assert "pause it" in said and "stop it" in said
