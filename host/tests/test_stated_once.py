"""Facts the host owns and others read: stated once, and the copies others read are current.

The metric keys the trainer writes are declared in empo2.metric_keys and exported to
protocol/metric-keys.json (the extension's chart table is checked against that file); the update
modes, rollout modes and authors are constants whose strings are the protocol's enums.
"""

from __future__ import annotations

import pytest

from conftest import tiny_run_overrides
from empo2 import metric_keys
from empo2.memory.tips import PERSON, POLICY, RESERVED_AUTHORS, SYSTEM
from empo2.server.transport.protocol import load_schema

DEFS = load_schema()["$defs"]


def test_protocol_metric_keys_json_is_generated_from_the_declarations():
    current = metric_keys.DEFAULT_PATH.read_text(encoding="utf-8")
    assert current == metric_keys.metric_keys_json(), (
        "protocol/metric-keys.json is stale: run `python -m empo2.metric_keys --write` in host/"
    )
    assert metric_keys.main(["--check"]) == 0


def test_the_check_command_fails_on_a_stale_file(tmp_path, capsys):
    stale = tmp_path / "metric-keys.json"
    stale.write_text('{"metrics": {"rollout/return": "old"}}\n')
    assert metric_keys.main(["--check", "--path", str(stale)]) == 1
    assert "stale" in capsys.readouterr().err
    assert metric_keys.main(["--write", "--path", str(stale)]) == 0
    assert metric_keys.main(["--check", "--path", str(stale)]) == 0


def test_every_declared_key_has_a_description_and_task_keys_match_one_segment():
    assert all(isinstance(text, str) and text.strip() for text in metric_keys.METRICS.values())
    assert metric_keys.is_declared("eval/memory/success/power-device")
    assert not metric_keys.is_declared("eval/memory/success/a/b")
    assert not metric_keys.is_declared("rollout/memory-free/return")  # keys use "memory_free"


def test_update_and_rollout_modes_and_authors_are_the_protocols_enums():
    from empo2.training.rollout import ROLLOUT_MODES
    from empo2.training.update import UPDATE_MODES

    assert list(UPDATE_MODES) == DEFS["UpdateMode"]["enum"]
    assert list(ROLLOUT_MODES) == DEFS["RolloutMode"]["enum"]
    assert sorted(DEFS["Author"]["properties"]["kind"]["enum"]) == sorted((POLICY, PERSON, SYSTEM))
    assert set(RESERVED_AUTHORS) == {POLICY, SYSTEM}
    assert [metric_keys.mode_segment(m) for m in ROLLOUT_MODES] == list(metric_keys.MODE_SEGMENTS)


@pytest.mark.slow
def test_every_key_a_training_run_writes_is_declared(tmp_path, tiny_policy, embedder):
    """A real run (memory and memory-free iterations, a KL term, evaluation) writes only
    declared keys: a key added to the trainer without a declaration fails here."""
    from empo2.config import load_config
    from empo2.run_folder.folder import RunFolder
    from empo2.training.trainer import Trainer

    overrides = tiny_run_overrides(
        tiny_policy, **{"iterations": 2, "algo.p_memory": 0.5, "algo.kl_beta": 0.01, "eval.every": 2}
    )
    config = load_config(overrides)
    config.root, config.name = str(tmp_path), "keys"
    folder = RunFolder.create(tmp_path, "keys", config.to_dict())
    trainer = Trainer(config, folder, embedder=embedder)
    try:
        trainer.run()
    finally:
        trainer.close()
    written = {key for record in folder.metrics() for key in record}
    assert metric_keys.UPDATE_PREFIX + "kl" in written and metric_keys.EVAL_MEMORY_FREE_SUCCESS in written
    assert sorted(k for k in written if not metric_keys.is_declared(k)) == []


def test_one_mapping_turns_store_tips_and_their_history_into_protocol_objects(embedder):
    """A real store's tip, edited once: the Tip and TipVersion objects carry every schema field
    and validate, without a field list outside the schema."""
    from empo2.memory.store import MemoryStore
    from empo2.server.transport.protocol import Validators
    from empo2.server.transport.wire import snake_case, tip_json, tip_version_json

    store = MemoryStore.open(None, embedder)
    tip = store.add_tip("power-device/1", "flip the switch first", score=5.0, author="ada")
    tip = store.update(tip.id, "flip the switch, then wait", expected_version=1, author="bob")
    validators = Validators()
    wire = tip_json(tip)
    assert set(wire) == set(DEFS["Tip"]["properties"])
    assert wire["variationKey"] == "power-device/1" and wire["version"] == 2
    assert wire["entries"] == tip.n_entries and wire["author"] == "ada"
    assert validators.errors("Tip", wire) == [] and tip_json(tip.to_dict()) == wire
    versions = [tip_version_json(e) for e in store.history(tip.id)]
    assert [v["author"] for v in versions] == ["ada", "bob"]
    assert all(validators.errors("TipVersion", v) == [] for v in versions)
    assert snake_case("variationKey") == "variation_key" and snake_case("id") == "id"


def test_rollout_settings_come_from_the_config_whole():
    """Every field of RolloutSettings is read from the config (bench/runner.py once dropped four)."""
    import dataclasses

    from empo2.config import load_config
    from empo2.envs.builtin.env import BuiltinEnv
    from empo2.training.rollout import RolloutSettings

    config = load_config(
        {
            "env": {"workers": 3},
            "memory": {"similarity_threshold": 0.7, "top_k": 4},
            "policy": {"max_sequence_tokens": 900, "generation_batch": 5, "temperature": 0.9, "eval_temperature": 0.2},
        }
    )
    train = RolloutSettings.from_config(config, BuiltinEnv(), train=True)
    evaluation = RolloutSettings.from_config(config, BuiltinEnv(), train=False)
    assert (train.temperature, evaluation.temperature) == (0.9, 0.2)
    assert (train.workers, train.similarity_threshold, train.top_k) == (3, 0.7, 4)
    assert (train.max_sequence_tokens, train.generation_batch) == (900, 5)
    assert all(f.default is dataclasses.MISSING for f in dataclasses.fields(RolloutSettings))
