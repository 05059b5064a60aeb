"""Every path that takes a run of a pretrained chat model: SmolLM2-135M-Instruct, trained with LoRA
adapters (a checkpoint holds the adapters, not the weights), then exported, exported as ONNX,
rerun on a branch after a person's tip edit, and replayed in the debugger.

One run serves the module: two EMPO² iterations of two one-step episodes on CPU (the test of
test_pretrained_policy.py checks what that run shows; here, what can be done with it after).
"""

from __future__ import annotations

import json

import pytest
import torch

from conftest import SMOLLM2_RUN
from empo2 import cli
from empo2.config import load_config
from empo2.memory.store import MemoryStore
from empo2.run_folder.folder import RunFolder

pytestmark = pytest.mark.slow
CORRECTED = "the battery was in the drawer in the kitchen . go to kitchen first . score 100"


@pytest.fixture(scope="module")
def run(tmp_path_factory, smollm2, embedder):
    """A finished LoRA run of the model with checkpoints 1 and 2, and one of its tips edited by
    a person afterwards (as the tips panel does)."""
    from empo2.training.trainer import Trainer

    root = tmp_path_factory.mktemp("chat-runs")
    config = load_config({**SMOLLM2_RUN, "checkpoint_every": 1})
    config.root, config.name = str(root), "chat"
    folder = RunFolder.create(root, "chat", config.to_dict())
    trainer = Trainer(config, folder, embedder=embedder)
    trainer.run()
    trainer.memory.close()  # the store passes to whoever opens it next
    trainer.close()
    with MemoryStore.open(folder.memory_path, embedder, capacity=config.memory.capacity) as store:
        tip = store.list_tips(author="policy")[0][0]
        store.update(tip.id, CORRECTED, tip.version, author="person")
    return folder


def _logits(folder, text: str = "go to the kitchen") -> torch.Tensor:
    from empo2.policy.model import load_policy

    model, tokenizer = load_policy(str(folder))
    with torch.no_grad():
        return model(torch.tensor([tokenizer.encode(text)])).logits


def test_a_checkpoint_holds_adapters_and_exports_as_a_whole_model(run, smollm2, tmp_path, capsys):
    checkpoint = run.checkpoints_path / "iter-000002"
    held = sum(p.stat().st_size for p in checkpoint.rglob("*") if p.is_file())
    assert held < 50e6  # adapters and their Adam state, not 0.5 GB of weights
    out = tmp_path / "exported"
    assert cli.main(["export", str(run.path), "--out", str(out)]) == 0
    capsys.readouterr()
    exported = _logits(out)
    assert exported.shape[-1] == 49_152 and torch.isfinite(exported).all()
    # The adapters were trained: the export is not the converted model it started from.
    assert not torch.allclose(exported, _logits(smollm2))
    assert "chat_template" in json.loads((out / "tokenizer_config.json").read_text()) or (
        out / "chat_template.jinja").exists()


def test_export_onnx_writes_the_graph_with_the_tokenizer(run, tmp_path, capsys):
    out = tmp_path / "onnx"
    assert cli.main(["export-onnx", str(run.path), "--out", str(out)]) == 0
    capsys.readouterr()
    import onnx

    graph = onnx.load(str(out / "model.onnx"), load_external_data=False).graph
    assert [i.name for i in graph.input][:2] == ["input_ids", "attention_mask"]
    assert (out / "tokenizer.json").exists()


def test_a_rerun_on_a_branch_after_a_person_s_edit(run, embedder):
    from empo2.rerun.branch import branches_of
    from empo2.rerun.runner import RerunSettings, rerun

    dry = rerun(run, RerunSettings(dry_run=True, episodes=2, iterations=1, eval_episodes=1), embedder=embedder)
    assert dry["dry_run"] and dry["loss"] is not None
    result = rerun(run, RerunSettings(episodes=2, iterations=1, eval_episodes=1), embedder=embedder)
    [branch] = branches_of(run)
    assert result["branch"] == branch.run_id
    assert any(CORRECTED in (edit.get("after") or "") for edit in result["tips"]), result["tips"]
    assert branch.checkpoint_iterations()[-1] == 3  # checkpoint 2, one rerun iteration on top


def test_the_debugger_replays_an_episode_with_the_checkpoint_that_played_it(run, embedder):
    from empo2.debug.launch import Launch, open_session

    record = next(iter(run.trajectories(2)))
    session, info = open_session(Launch(task=None, variation=None, seed=0, mode="memory", temperature=None,
                                        device="cpu", run=run, record=record, record_run=run), embedder)
    assert info["checkpoint"] == 1 and info["replay"]["maxLogprobError"] < 1e-4
    turn, _ = session.step("turn")
    assert turn.action == record["steps"][0]["action"] and turn.replay["observationMatches"] is True
