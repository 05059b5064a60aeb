"""Every path that takes a run of a pretrained chat model: SmolLM2-135M-Instruct, trained with LoRA
adapters (a checkpoint holds the adapters, not the weights), then exported, exported as ONNX,
rerun on a branch after a person's tip edit, and replayed in the debugger; trained sharded over
two processes (fsdp2, gloo); and trained behind the server, a person's edit reaching the next
retrieval.

One run serves most of the module: two EMPO² iterations of two one-step episodes on CPU (the
test of test_pretrained_policy.py checks what that run shows; here, what can be done with it
after). The sharded and the served runs are runs of their own of the same config.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
import torch

from conftest import SMOLLM2_RUN
from empo2 import cli
from empo2.config import load_config
from empo2.memory.store import MemoryStore
from empo2.run_folder.folder import RunFolder
from test_distributed import torchrun

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
    assert (
        "chat_template" in json.loads((out / "tokenizer_config.json").read_text())
        or (out / "chat_template.jinja").exists()
    )


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
    session, info = open_session(
        Launch(
            task=None,
            variation=None,
            seed=0,
            mode="memory",
            temperature=None,
            device="cpu",
            run=run,
            record=record,
            record_run=run,
        ),
        embedder,
    )
    assert info["checkpoint"] == 1 and info["replay"]["maxLogprobError"] < 1e-4
    turn, _ = session.step("turn")
    assert turn.action == record["steps"][0]["action"] and turn.replay["observationMatches"] is True


def _policy_tips_read_back(episodes: list[dict]) -> None:
    """Iteration 1's episodes each wrote a tip; iteration 2's prompts carry those tips."""
    written = {e["tip"].strip() for e in episodes if e["iteration"] == 1}
    later = [s for e in episodes if e["iteration"] == 2 for s in e["steps"]]
    assert written and all(written) and later
    assert all(s["tip_texts"] and set(s["tip_texts"]) <= written for s in later)


def test_two_sharded_processes_train_the_model_resume_it_and_export_it(tmp_path, smollm2):
    """dist.strategy=fsdp2 over two gloo processes (torchrun), LoRA adapters sharded with their
    layers: the run finishes both iterations, its tips are the model's and read back; it resumes
    from its sharded checkpoint (adapters and their Adam state, no frozen weights) for a third
    iteration; and that checkpoint exports, as an unsharded LoRA checkpoint does (the adapters
    on their base), to weights that are not the converted model's."""
    config = tmp_path / "sharded.json"
    config.write_text(json.dumps({**SMOLLM2_RUN, "dist": {"strategy": "fsdp2"}}))
    runs = tmp_path / "runs"
    trained = torchrun(
        ["-m", "empo2.cli", "train", "--config", str(config), "--root", str(runs), "--name", "sharded"],
        tmp_path,
        timeout=900,
    )
    assert trained.returncode == 0, trained.stderr[-3000:]
    folder = RunFolder(runs / "sharded")
    assert folder.state()["state"] == "finished"
    assert [m["iteration"] for m in folder.metrics()] == [1, 2]
    _policy_tips_read_back([folder.trajectory(s["id"]) for s in folder.trajectory_summaries()])

    resumed = torchrun(["-m", "empo2.cli", "resume", str(folder.path), "iterations=3"], tmp_path, timeout=900)
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    assert [m["iteration"] for m in folder.metrics()] == [1, 2, 3]
    assert folder.state()["state"] == "finished"

    out = tmp_path / "exported"
    exported = subprocess.run(
        [sys.executable, "-m", "empo2.cli", "export", str(folder.path), "--out", str(out)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert exported.returncode == 0, exported.stderr[-3000:]
    assert (out / "adapter_config.json").is_file()
    logits = _logits(out)
    assert logits.shape[-1] == 49_152 and torch.isfinite(logits).all()
    assert not torch.allclose(logits, _logits(smollm2))


def test_served_the_model_trains_and_a_person_s_edit_reaches_the_next_retrieval(tmp_path, smollm2, embedder):
    """`serve`'s host runs the model as the extension starts it (run.start over JSON-RPC):
    paused after iteration 1, the model's own tips are listed, a person rewrites one, and
    iteration 2's prompts show the rewrite."""
    from server_support import SchemaCheck, connect, make_host

    host = make_host([tmp_path / "runs"], embedder)
    client = connect(host, SchemaCheck())
    try:
        run = client.request("run.start", {"config": SMOLLM2_RUN, "name": "served", "pauseAfterIteration": 1})["run"]
        assert run["live"] and run["iterations"] == 2
        client.wait_for(lambda m: m["method"] == "run/state" and m["params"]["run"]["state"] == "paused", timeout=600)
        tips = client.request("memory.list", {"runId": "served", "limit": 100})["items"]
        assert tips and all(t["author"] == "policy" and t["text"].strip() for t in tips)
        edited = client.request(
            "memory.update",
            {"runId": "served", "tipId": tips[0]["id"], "text": CORRECTED, "expectedVersion": tips[0]["version"]},
        )["tip"]
        assert edited["author"] == "policy" and edited["versionAuthor"] != "policy" and edited["version"] == 2
        client.request("run.resume", {"runId": "served"})
        client.wait_for(lambda m: m["method"] == "run/state" and m["params"]["run"]["state"] == "finished", timeout=600)
        shown = []
        for summary in client.request("trajectory.list", {"runId": "served", "filter": {"iteration": 2}})["items"]:
            episode = client.request("trajectory.get", {"runId": "served", "episodeId": summary["id"]})["episode"]
            shown += [text for step in episode["steps"] for text in step["tip_texts"]]
        assert CORRECTED in shown, shown
    finally:
        client.close()
        host.stop()
