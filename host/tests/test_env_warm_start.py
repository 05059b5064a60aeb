"""An environment's own demonstrations (policy/env_demos.py) and the warm start of a chat model on
them (`build-policy --model MODEL --warm-start --env NAME`, policy/env_warm_start.py): the example
ships a file that loads and is the one its script writes; a bad file is one sentence naming its
line; the command fine-tunes a model folder end to end into a loadable, cached policy; and a name
that finds no environment, or an environment without demonstrations, is one sentence and exit 2."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest
import torch

from empo2 import cli
from empo2.config import EnvConfig
from empo2.envs import EnvironmentFault
from empo2.envs.registry import make_env
from empo2.policy.env_demos import demonstration_examples, demonstrations_file, load_demonstrations
from empo2.policy.env_warm_start import env_warm_start_recipe
from empo2.policy.model import load_policy
from empo2.policy.prompting import SYSTEM_PROMPT, Turn, step_user_text, system_prompt_for

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "lockbox-env"
LOCKBOX = "lockbox_env:LockboxEnv"
GOOD = {
    "task": "main",
    "task_description": "reach the door",
    "observations": ["you stand at the start .", "you walk .", "you reach the door ."],
    "actions": ["walk", "walk"],
    "score": 100,
    "tip": "walking twice reaches the door . score 100",
}


class Demonstrated:
    """A corridor whose demonstrations file is the class attribute `file`."""

    file: Path | str | None = None

    def reset(self, seed):
        return "you stand at the start ."

    def step(self, action):
        return "you reach the door .", 100.0, True, {"success": True}

    def demonstrations(self):
        return Demonstrated.file


class Undemonstrated(Demonstrated):
    demonstrations = None


@pytest.fixture
def lockbox(monkeypatch):
    monkeypatch.syspath_prepend(str(EXAMPLE))
    env = make_env(EnvConfig(name=LOCKBOX))
    yield env
    env.close()


def _write(tmp_path: Path, *lines: str) -> Path:
    Demonstrated.file = tmp_path / "demos.jsonl"
    Demonstrated.file.write_text("".join(line + "\n" for line in lines))
    return Demonstrated.file


def test_the_example_ships_a_few_hundred_steps_that_load_and_are_what_its_script_writes(lockbox):
    path = demonstrations_file(lockbox, LOCKBOX)
    episodes = load_demonstrations(path, LOCKBOX)
    assert sum(len(e.actions) for e in episodes) >= 300
    assert all(e.tip and e.score == 100 for e in episodes)
    spec = importlib.util.spec_from_file_location("make_demonstrations", EXAMPLE / "make_demonstrations.py")
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    written = [script.episode(t, v, s) for t in script.TASKS for v in script.TRAIN_VARIATIONS for s in script.SEEDS]
    assert [json.loads(line) for line in path.read_text().splitlines()] == written


def test_each_step_is_the_prompt_a_rollout_builds_and_each_tip_a_reflection(lockbox):
    episodes = load_demonstrations(demonstrations_file(lockbox, LOCKBOX), LOCKBOX)
    first = episodes[0]
    examples = demonstration_examples(episodes[:1], lockbox.instructions(), 3, 10, 10)
    assert len(examples) == len(first.actions) + 1
    assert [answer for _, answer in examples] == first.actions + [first.tip]
    messages, _ = examples[2]
    assert messages[0] == {"role": "system", "content": lockbox.instructions()}
    history = [Turn(a, o) for a, o in zip(first.actions[:2], first.observations[1:3])]
    assert messages[1]["content"] == step_user_text(first.task_description, history, first.observations[2], 3, 10)
    assert "final score : 100" in examples[-1][0][1]["content"]


def test_an_environment_without_instructions_is_prompted_with_the_built_in_system_prompt(tmp_path):
    """As a rollout prompts it (the contract: without instructions() the built-in one), not with
    no system text, which a chat template cannot render."""
    env = make_env(EnvConfig(name="test_env_warm_start:Demonstrated"))
    assert system_prompt_for(env) == SYSTEM_PROMPT
    examples = demonstration_examples(
        load_demonstrations(_write(tmp_path, json.dumps(GOOD)), "corridor"), system_prompt_for(env), 3, 10, 10
    )
    assert all(messages[0] == {"role": "system", "content": SYSTEM_PROMPT} for messages, _ in examples)


@pytest.mark.parametrize(
    "line, says",
    [
        ("{not json", "line 2 is not JSON"),
        ("[1, 2]", "line 2 is a list, not a JSON object"),
        (json.dumps({**GOOD, "reward": 1}), "line 2 has the unknown key 'reward'"),
        (json.dumps({**GOOD, "actions": []}), "line 2: 'actions' is not a non-empty list of text"),
        (json.dumps({**GOOD, "observations": ["a"]}), "line 2 has 1 observations for 2 actions"),
        (
            json.dumps({**GOOD, "actions": ["walk", "> walk ."]}),
            "line 2: action 2 '> walk .' is not as the environment receives it ('walk')",
        ),
        ('{"observations": ["a", "b"], "actions": ["walk"], "score": NaN}', "line 2: 'score' is not a finite number"),
        (json.dumps({**GOOD, "score": None}), "line 2 has a tip but not the final 'score'"),
        (json.dumps({**GOOD, "tip": 3}), "line 2: 'tip' is not text"),
    ],
)
def test_a_bad_line_is_one_sentence_naming_the_file_and_the_line(tmp_path, line, says):
    path = _write(tmp_path, json.dumps(GOOD), line)
    with pytest.raises(EnvironmentFault) as raised:
        load_demonstrations(path, "corridor")
    message = str(raised.value)
    assert message.startswith("environment 'corridor' demonstrations demos.jsonl ") and says in message
    assert len(message.splitlines()) == 1


def test_an_empty_file_and_a_missing_one_are_one_sentence_each(tmp_path):
    with pytest.raises(EnvironmentFault, match="demos.jsonl hold no episode"):
        load_demonstrations(_write(tmp_path, "", "  "), "corridor")
    Demonstrated.file = tmp_path / "gone.jsonl"
    env = make_env(EnvConfig(name="test_env_warm_start:Demonstrated"))
    with pytest.raises(EnvironmentFault, match="gone.jsonl, which does not exist"):
        demonstrations_file(env, "corridor")


def _one_sentence(capsys, *argv) -> str:
    assert cli.main(["build-policy", *argv]) == 2
    err = capsys.readouterr().err.strip()
    assert "Traceback" not in err and len(err.splitlines()) == 1, err
    return err


def test_a_name_without_an_environment_or_without_demonstrations_is_one_sentence(capsys, tmp_path, monkeypatch):
    monkeypatch.setenv("EMPO2_CACHE_DIR", str(tmp_path))
    smollm2 = ("--model", "smollm2-135m-instruct", "--warm-start")
    assert "names no environment: 'alfworld'" in _one_sentence(capsys, *smollm2, "--env", "alfworld")
    assert "environment 'test_env_warm_start:Undemonstrated' ships no demonstrations" in _one_sentence(
        capsys, *smollm2, "--env", "test_env_warm_start:Undemonstrated"
    )
    assert "is built in and ships no demonstrations" in _one_sentence(capsys, *smollm2, "--env", "builtin")
    assert "--env is for --warm-start" in _one_sentence(capsys, "--model", "smollm2-135m-instruct", "--env", "x:Y")
    _write(tmp_path, json.dumps({**GOOD, "score": "high"}))
    assert "demos.jsonl line 1: 'score' is not a finite number" in _one_sentence(
        capsys, *smollm2, "--env", "test_env_warm_start:Demonstrated"
    )
    assert "is neither a packaged model" in _one_sentence(
        capsys, "--model", str(tmp_path / "nowhere"), "--warm-start", "--env", "test_env_warm_start:Demonstrated"
    )
    assert "is not 'builtin' nor a packaged model" in _one_sentence(capsys, "--model", "gpt-5")
    assert not list(tmp_path.rglob("*.safetensors"))  # nothing was converted or built


@pytest.mark.slow
def test_build_policy_warm_starts_a_model_folder_on_the_demonstrations_into_a_cached_loadable_policy(
    smollm2, tmp_path, monkeypatch, capsys
):
    """Two optimizer steps (one episode of two steps and its tip, two epochs of one batch) on the
    converted SmolLM2 folder: the demonstrated answers become likelier, and the build is cached."""
    monkeypatch.setenv("EMPO2_CACHE_DIR", str(tmp_path / "cache"))
    _write(tmp_path, json.dumps(GOOD))
    argv = ["build-policy", "--model", str(smollm2), "--warm-start", "--env", "test_env_warm_start:Demonstrated"]
    assert cli.main(argv) == 0
    out, err = capsys.readouterr()
    report = json.loads(out.splitlines()[-1])
    path = Path(report["path"])
    assert path.parent == tmp_path / "cache" / "policies"
    assert report["env"] == "test_env_warm_start:Demonstrated" and report["examples"] == 3
    assert report["demonstrations"] == {"file": "demos.jsonl", "episodes": 1, "steps": 2, "tips": 1}
    assert report["optimizer_steps"] == 2 and all(loss == loss for loss in report["epoch_losses"])
    assert (
        f"train it with: env.name=test_env_warm_start:Demonstrated policy.model={path} "
        "policy.history_steps=3 policy.observation_words=10" in err
    )

    def mean_logprob(folder: Path) -> float:
        from empo2.policy.generation import sequence_logprobs
        from empo2.policy.tokenizer import encode_chat, encode_response

        model, tokenizer = load_policy(str(folder))
        examples = demonstration_examples(load_demonstrations(Demonstrated.file, "corridor"), SYSTEM_PROMPT, 3, 10, 10)
        with torch.no_grad():
            logp, _, mask = sequence_logprobs(
                model,
                [encode_chat(tokenizer, m) for m, _ in examples],
                [encode_response(tokenizer, a) for _, a in examples],
                with_entropy=False,
                pad_id=tokenizer.pad_token_id,
            )
        return float(logp.sum() / mask.sum())

    assert mean_logprob(path) > mean_logprob(smollm2)
    assert cli.main(argv) == 0  # found in the cache: the same folder, not built again
    assert json.loads(capsys.readouterr().out.splitlines()[-1])["seconds"] == report["seconds"]
    _write(tmp_path, json.dumps({**GOOD, "tip": "another tip . score 100"}))
    assert (
        env_warm_start_recipe(str(smollm2), "test_env_warm_start:Demonstrated")[1] != path
    )  # another file, another recipe
