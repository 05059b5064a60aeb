"""What a tip id names and what the prompt shows for it agree, part by part.

The prompt shows a retrieved tip as its text, then the action of its entry most like the current
state (prompting.shown_tip, as the reference code's entries do), so one tip id reads differently
from step to step. Each step record therefore also keeps the two parts, `tip_texts` (what the
id names) and `tip_actions`, parallel to `tip_ids`, and the episode view shows both.
"""

from __future__ import annotations

import re

import pytest

from conftest import tiny_run_overrides
from empo2.config import load_config
from empo2.memory.tips import Retrieved
from empo2.policy.prompting import shown_tip
from empo2.run_folder.folder import RunFolder
from empo2.training.rollout import distinct_tips, tip_parts
from empo2.training.trainer import Trainer


def entry(tip_id: str, text: str, action: str, score: float = 0.0, episode_score=None) -> Retrieved:
    return Retrieved(
        tip_id=tip_id, text=text, score=score, similarity=0.9, action=action, entry=0, episode_score=episode_score
    )


def test_the_parts_of_each_shown_tip_join_into_what_the_prompt_shows():
    # Two entries of t1 (two states of its episode) and one of t2, in rank order.
    retrieved = [
        entry("t1", "open the shed ", "open door"),
        entry("t2", "heat the food", ""),
        entry("t1", "open the shed ", "go north"),
    ]
    texts, ids = distinct_tips(retrieved)
    parts = tip_parts(retrieved)
    assert ids == ["t1", "t2"]
    assert parts == {"t1": ("open the shed", "open door"), "t2": ("heat the food", "")}
    assert [shown_tip(*parts[i]) for i in ids] == texts


def test_with_show_score_each_shown_tip_ends_with_its_entrys_episode_score(embedder):
    """memory.show_score: a tip reads `text ; action : … ; score : …`, the score its shown
    entry's episode earned (the reference's entry = tip + action + score); a text a person
    wrote has no episode, so no score; without show_score the block is as before."""
    from empo2.memory import MemoryStore

    store = MemoryStore.open(None, embedder)
    bulb = "the room has a red light bulb, a battery and a switch"
    store.add_episode_tip("k/1", "the bulb is here . it worked", [(bulb, "go to hall")], 0.0)
    store.add_episode_tip("k/1", "the bulb is here . it worked", [(bulb + " !", "go to attic")], 100.0)
    person = store.add_tip("k/1", "look in the attic", None, author="ada", key_text=bulb)
    [retrieved] = store.retrieve("k/1", [bulb], threshold=0.0)
    texts, ids = distinct_tips(retrieved, show_score=True)
    assert texts == ["look in the attic", "the bulb is here . it worked ; action : go to attic ; score : 100"]
    assert ids[0] == person.id
    assert distinct_tips(retrieved)[0] == ["look in the attic", "the bulb is here . it worked ; action : go to attic"]
    assert shown_tip("a", "b", -12.5) == "a ; action : b ; score : -12.5"


@pytest.mark.slow
def test_every_step_record_keeps_the_tip_text_its_id_names_and_the_entry_action(tmp_path, tiny_policy, embedder):
    config = load_config(tiny_run_overrides(tiny_policy, **{"iterations": 2, "eval.every": 0}))
    config.root, config.name = str(tmp_path), "run"
    folder = RunFolder.create(tmp_path, "run", config.to_dict())
    trainer = Trainer(config, folder, embedder=embedder)
    trainer.run()

    steps = [
        s
        for summary in folder.trajectory_summaries()
        if summary["iteration"] == 2
        for s in folder.trajectory(summary["id"])["steps"]
    ]
    shown = [s for s in steps if s["tip_ids"]]
    assert shown, "iteration 2 retrieved tips"
    for step in steps:
        assert len(step["tip_texts"]) == len(step["tip_actions"]) == len(step["tip_ids"]) == len(step["tips"])
        for tip_id, text, action, in_prompt in zip(
            step["tip_ids"], step["tip_texts"], step["tip_actions"], step["tips"]
        ):
            # memory.show_score (on by default): the entry's episode score follows.
            assert re.fullmatch(re.escape(shown_tip(text, action)) + r" ; score : -?[0-9.]+", in_prompt)
            # Nobody edited a tip: the text recorded is the tip's text in the store.
            assert trainer.memory.get(tip_id).text.strip() == text
