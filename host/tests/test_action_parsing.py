"""What a chat model writes for an action, and the built-in policy's prompts held byte for byte.

A pretrained chat model answers "> go to kitchen." or "Action: open case" where the built-in
word-level policy writes "go to kitchen"; the parser takes the one action out of either, and
whatever is still no valid action stays invalid, as before.
"""

from __future__ import annotations

import pytest

from empo2.envs.base import parse_action
from empo2.envs.builtin.env import BuiltinEnv
from empo2.policy.prompting import Turn, reflection_messages, step_messages, step_user_text, with_tips
from empo2.policy.tokenizer import build_word_tokenizer


@pytest.mark.parametrize(
    "written,action",
    [
        ("go to kitchen", "go to kitchen"),  # the built-in policy's own output
        ("> go to kitchen.", "go to kitchen"),  # a text game's prompt mark, a full stop
        ('  "open case!"  ', "open case"),
        ("Action: take battery", "take battery"),
        ("**look around**", "look around"),
        ("`go to shed`;", "go to shed"),
        ("\n\ngo to shed\nopen bin", "go to shed"),  # one action per turn: the first line
        ("> > look around", "look around"),
        ("put battery in fan .", "put battery in fan"),  # word-level spacing before the stop
        ("You are in the kitchen. You are in the kitchen.", "You are in the kitchen. You are in the kitchen"),
        ("...", ""),
        ("", ""),
    ],
)
def test_the_one_action_is_taken_out_of_what_a_model_wrote(written, action):
    assert parse_action(written) == action


def _env():
    env = BuiltinEnv(correct_actions=False)
    _, info = env.reset("power-device", 0)
    assert "go to kitchen" in info.valid_actions
    return env


def test_a_wrapped_action_runs_and_the_history_shows_the_action_that_ran():
    observation, _, _, info = _env().step("> Go to kitchen.")
    assert observation.startswith("you are in the kitchen")
    assert info.corrected_action == "go to kitchen"
    # The built-in policy's own text runs as it is, uncorrected (as before the parser).
    assert _env().step("go to kitchen")[3].corrected_action is None


def test_prose_and_a_second_action_stay_invalid_without_correction():
    env = _env()
    observation, _, _, info = env.step("You are in the kitchen. You are in the kitchen.")
    assert observation == "nothing happens ." and info.corrected_action is None
    # Only the first line is the action: a valid second line does not rescue prose.
    assert env.step("I think so\ngo to kitchen")[0] == "nothing happens ."


def test_correction_still_replaces_what_the_parser_leaves_invalid():
    env = BuiltinEnv(correct_actions=True)
    env.reset("power-device", 0)
    _, _, _, info = env.step("> walk to the kitchen please.")
    assert info.corrected_action == "go to kitchen"


def test_the_word_level_policys_prompts_are_byte_identical():
    """The built-in policy was trained on exactly these strings: a change to how chat models
    are prompted must leave them as they are."""
    tokenizer = build_word_tokenizer(["x"])
    user = step_user_text(
        "power the fan",
        [Turn("go to kitchen", "you are in the kitchen . here : a fan")],
        "you open the case . it holds a battery",
        history_steps=3,
        observation_words=10,
    )
    step = tokenizer.apply_chat_template(
        step_messages(with_tips(user, ["open case ; action : open case"])), add_generation_prompt=True, tokenize=False
    )
    assert step == (
        "<|system|> you are an agent in a text world . answer with one action . <|end|> "
        "<|user|> task : power the fan . history : go to kitchen -> you are in the kitchen . here"
        " : a fan . now : you open the case . it holds a battery <tip> open case ; action : open"
        " case </tip> <|end|> <|assistant|>"
    )
    reflection = tokenizer.apply_chat_template(
        reflection_messages("power the fan", [Turn("go to kitchen", "you are in the kitchen .")], 0.0, 10),
        add_generation_prompt=True,
        tokenize=False,
    )
    assert reflection == (
        "<|system|> you are an agent in a text world . answer with one action . <|end|> "
        "<|user|> task : power the fan . episode : go to kitchen -> you are in the kitchen . . "
        "final score : 0 . reflect : in one sentence , say what happened , what you learned and "
        "how far you were from success . <|end|> <|assistant|>"
    )
