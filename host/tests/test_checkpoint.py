"""Training checkpoints (training/checkpoint.py) saved and loaded directly, in seconds.

The trainer tests (test_train.py, test_cli.py's resume, test_sharding.py) save and resume
checkpoints too, but they take minutes and compare a run with another run of the same code;
these check each field of a checkpoint against the state it was saved from. The parts are the
real ones: the tiny built-in policy, a torch AdamW after real optimizer steps, the trainer's
generators, the novelty archive and a memory store on disk. Only the trainer object itself is a
plain namespace holding them (save_checkpoint and load_checkpoint read nothing else from it);
building a real Trainer would start environments and load the sentence embedder.
"""

from __future__ import annotations

import json
import random
import types

import numpy as np
import pytest
import torch
from safetensors.torch import load_file, save_file

from empo2.algo.intrinsic import make_intrinsic_reward
from empo2.memory.store import MemoryStore
from empo2.policy.model import LoraSettings, load_policy
from empo2.run_folder.folder import RunFolder
from empo2.training import checkpoint as checkpoint_module
from empo2.training.checkpoint import load_checkpoint, save_checkpoint
from empo2.training.distributed import SINGLE, Dist
from empo2.training.sharding import has_sharded
from test_runs import OneHotEmbedder


def make_trainer(policy, seed: int, dist: Dist = SINGLE, lora: LoraSettings | None = None):
    model, tokenizer = load_policy(str(policy), device="cpu", lora=lora)
    optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-2)
    return types.SimpleNamespace(
        model=model,
        tokenizer=tokenizer,
        optimizer=optimizer,
        dist=dist,
        device=torch.device("cpu"),
        rng=random.Random(seed),
        generator=torch.Generator().manual_seed(seed),
        intrinsic=make_intrinsic_reward("paper", threshold=0.8),
        memory=None,
        iteration=0,
        env_steps=0,
    )


def train_a_little(trainer, steps: int = 2) -> None:
    """Real optimizer steps, so that the weights leave the policy's and AdamW has state."""
    ids = torch.tensor([[1, 7, 9, 11, 3, 5]])
    trainer.model.train()
    for _ in range(steps):
        trainer.optimizer.zero_grad()
        trainer.model(input_ids=ids, labels=ids).loss.backward()
        trainer.optimizer.step()
    trainer.model.eval()


def advance(trainer) -> None:
    """Draws from every generator and fills the novelty archive, as an iteration would."""
    trainer.rng.random()
    torch.rand(3, generator=trainer.generator)
    torch.rand(5)  # the global generator
    states = np.eye(4, dtype=np.float32)[[0, 1, 0, 2]]
    trainer.intrinsic.rewards("grow-plant/1", embeddings=states, steps=np.arange(4))
    trainer.intrinsic.rewards("power-device/0", embeddings=states[:2], steps=np.arange(2))


def weights(model) -> dict[str, torch.Tensor]:
    return {k: v.detach().clone() for k, v in model.state_dict().items()}


def assert_same_tensors(a: dict, b: dict) -> None:
    assert a.keys() == b.keys()
    for k in a:
        assert torch.equal(a[k], b[k]), k


def assert_same_optimizer(a: dict, b: dict) -> None:
    assert a["param_groups"] == b["param_groups"]
    assert a["state"].keys() == b["state"].keys() and a["state"]
    for index, state in a["state"].items():
        assert state.keys() == b["state"][index].keys()
        for k, v in state.items():
            assert torch.equal(v, b["state"][index][k]), (index, k)


def assert_same_intrinsic(a: dict, b: dict) -> None:
    assert {k: v for k, v in a.items() if k != "stores"} == {k: v for k, v in b.items() if k != "stores"}
    assert a["stores"].keys() == b["stores"].keys() and a["stores"]
    for key, store in a["stores"].items():
        for field in ("vectors", "counts"):
            np.testing.assert_array_equal(store[field], b["stores"][key][field])
            assert store[field].dtype == b["stores"][key][field].dtype


def run_folder(tmp_path) -> RunFolder:
    return RunFolder.create(tmp_path, "run", {"seed": 0})


def test_a_checkpoint_restores_every_field_it_saved(tmp_path, tiny_policy):
    folder = run_folder(tmp_path)
    trainer = make_trainer(tiny_policy, seed=3)
    initial = weights(trainer.model)
    store = MemoryStore.open(folder.memory_path, OneHotEmbedder(), capacity=10)
    store.add_tip("grow-plant/1", "water it first", None, author="ana")
    trainer.memory = store
    train_a_little(trainer)
    advance(trainer)
    trainer.iteration, trainer.env_steps = 2, 37
    saved = {
        "weights": weights(trainer.model),
        "optimizer": trainer.optimizer.state_dict(),
        "rng": trainer.rng.getstate(),
        "generator": trainer.generator.get_state(),
        "global": torch.get_rng_state(),
        "intrinsic": trainer.intrinsic.state_dict(),
        "marker": store.marker(),
    }
    assert not all(torch.equal(initial[k], v) for k, v in saved["weights"].items())
    save_checkpoint(folder, trainer, keep=2)
    store.close()

    path = folder.checkpoints_path / "iter-000002"
    assert folder.latest_checkpoint() == (2, path)
    assert sorted(p.name for p in folder.checkpoints_path.iterdir()) == ["iter-000002"]  # no .tmp
    assert {p.name for p in path.iterdir()} == {"model", "optimizer.pt", "rng.pt", "trainer.json"}
    model_files = {p.name for p in (path / "model").iterdir()}
    assert {"config.json", "model.safetensors", "tokenizer.json"} <= model_files
    assert json.loads((path / "trainer.json").read_text()) == {
        "iteration": 2,
        "env_steps": 37,
        "memory_marker": saved["marker"],
        "has_model": True,
        "format": "pretrained",
        "world": 1,
    }
    # The model folder loads by itself (`empo2-host eval --run`): weights and tokenizer.
    alone, tokenizer = load_policy(str(path / "model"), device="cpu")
    assert_same_tensors(weights(alone), saved["weights"])
    assert tokenizer.encode("grow the plant") == trainer.tokenizer.encode("grow the plant")

    torch.manual_seed(99)  # a fresh process: other draws before the resume
    fresh = make_trainer(tiny_policy, seed=11)
    state = load_checkpoint(path, fresh)
    assert state == json.loads((path / "trainer.json").read_text())
    assert_same_tensors(weights(fresh.model), saved["weights"])
    assert_same_optimizer(fresh.optimizer.state_dict(), saved["optimizer"])
    assert fresh.rng.getstate() == saved["rng"]
    assert torch.equal(fresh.generator.get_state(), saved["generator"])
    assert torch.equal(torch.get_rng_state(), saved["global"])
    assert_same_intrinsic(fresh.intrinsic.state_dict(), saved["intrinsic"])
    # The resumed optimizer continues the same trajectory as the one that was never stopped.
    train_a_little(trainer, steps=1)
    train_a_little(fresh, steps=1)
    assert_same_tensors(weights(fresh.model), weights(trainer.model))


def test_iteration_zero_saves_no_model_and_loads_none(tmp_path, tiny_policy):
    """At iteration 0 the model is the configured one: only generators and state are saved."""
    folder = run_folder(tmp_path)
    trainer = make_trainer(tiny_policy, seed=3)
    advance(trainer)
    saved_rng = trainer.rng.getstate()
    save_checkpoint(folder, trainer, keep=2)
    path = folder.checkpoints_path / "iter-000000"
    assert {p.name for p in path.iterdir()} == {"rng.pt", "trainer.json"}
    assert json.loads((path / "trainer.json").read_text()) == {
        "iteration": 0,
        "env_steps": 0,
        "memory_marker": None,
        "has_model": False,
        "format": "pretrained",
        "world": 1,
    }

    fresh = make_trainer(tiny_policy, seed=11)
    train_a_little(fresh)  # whatever the model holds stays: nothing is loaded into it
    before, optimizer = weights(fresh.model), fresh.optimizer.state_dict()
    assert load_checkpoint(path, fresh)["has_model"] is False
    assert_same_tensors(weights(fresh.model), before)
    assert_same_optimizer(fresh.optimizer.state_dict(), optimizer)
    assert fresh.rng.getstate() == saved_rng


def test_the_checkpoint_is_filled_under_a_temporary_name_with_trainer_json_last(tmp_path, tiny_policy, monkeypatch):
    """A kill before the rename leaves only `.iter-N.tmp` (which resume ignores and clears); a
    kill inside it, a folder without trainer.json, which counts as no checkpoint."""
    folder = run_folder(tmp_path)
    trainer = make_trainer(tiny_policy, seed=3)
    train_a_little(trainer)
    trainer.iteration = 1
    seen = []
    real_write, real_commit = checkpoint_module.atomic_write_json, folder.commit_checkpoint

    def write(path, value):
        seen.append(("trainer.json", path, sorted(p.name for p in path.parent.iterdir())))
        real_write(path, value)

    def commit(iteration, tmp, keep, pinned=None):
        seen.append(("commit", tmp, folder.checkpoint_iterations()))
        return real_commit(iteration, tmp, keep, pinned)

    monkeypatch.setattr(checkpoint_module, "atomic_write_json", write)
    monkeypatch.setattr(folder, "commit_checkpoint", commit)
    save_checkpoint(folder, trainer, keep=2)
    tmp = folder.checkpoints_path / ".iter-000001.tmp"
    assert seen == [("trainer.json", tmp / "trainer.json", ["model", "optimizer.pt", "rng.pt"]), ("commit", tmp, [])]
    assert folder.checkpoint_iterations() == [1]


def test_a_save_killed_before_trainer_json_leaves_the_previous_checkpoint(tmp_path, tiny_policy, monkeypatch):
    folder = run_folder(tmp_path)
    trainer = make_trainer(tiny_policy, seed=3)
    save_checkpoint(folder, trainer, keep=2)

    def killed(path, value):
        raise KeyboardInterrupt  # the process stops here; nothing after it runs

    monkeypatch.setattr(checkpoint_module, "atomic_write_json", killed)
    train_a_little(trainer)
    trainer.iteration = 1
    with pytest.raises(KeyboardInterrupt):
        save_checkpoint(folder, trainer, keep=2)
    assert folder.latest_checkpoint() == (0, folder.checkpoints_path / "iter-000000")
    folder.rollback_to(0)  # what resume does: the half-filled folder goes
    assert sorted(p.name for p in folder.checkpoints_path.iterdir()) == ["iter-000000"]


def test_only_the_newest_checkpoints_are_kept(tmp_path, tiny_policy):
    folder = run_folder(tmp_path)
    trainer = make_trainer(tiny_policy, seed=3)
    for iteration in (0, 1, 2):
        trainer.iteration = iteration
        save_checkpoint(folder, trainer, keep=2)
    assert folder.checkpoint_iterations() == [1, 2]
    trainer.iteration = 3
    save_checkpoint(folder, trainer, keep=1)
    assert folder.checkpoint_iterations() == [3]


def test_the_checkpoint_before_a_person_s_edit_is_kept_until_a_rerun_has_seen_the_edit(tmp_path, tiny_policy):
    """keep=2 alone would leave no checkpoint before an edit made three iterations ago, and
    "Rerun Off-Policy Update" could not start from before it; the checkpoint just before the
    oldest edit no branch has copied is kept besides the newest, and only until a branch has."""
    from empo2.rerun.branch import create_branch

    folder = run_folder(tmp_path)
    trainer = make_trainer(tiny_policy, seed=3)
    trainer.memory = MemoryStore.open(folder.memory_path, OneHotEmbedder())
    policy_tip = trainer.memory.add_episode_tip("grow-plant/0", "water the seed", [("look", "water seed")], 1.0)

    def save(iteration):
        trainer.iteration = iteration
        save_checkpoint(folder, trainer, keep=2)

    for iteration in (0, 1, 2):
        save(iteration)
    assert folder.checkpoint_iterations() == [1, 2], "no edit: only the newest two"
    trainer.memory.update(
        policy_tip.id, "water the seed, then wait", expected_version=policy_tip.version, author="alice"
    )
    for iteration in (3, 4, 5):
        save(iteration)
    assert folder.checkpoint_iterations() == [2, 4, 5], "the one before alice's edit stays"
    branch = create_branch(folder, checkpoint=2)
    assert json.loads((branch.path / "parent.json").read_text())["tip_edits"], "the branch has the edit"
    save(6)
    assert folder.checkpoint_iterations() == [5, 6], "a rerun has seen the edit: nothing pinned"
    trainer.memory.add_tip("grow-plant/0", "look under the pot", None, author="bob")
    for iteration in (7, 8, 9):
        save(iteration)
    assert folder.checkpoint_iterations() == [6, 8, 9], "an edit after the branch pins again"
    trainer.memory.close()


def test_a_rank_other_than_zero_writes_nothing(tmp_path, tiny_policy):
    folder = run_folder(tmp_path)
    trainer = make_trainer(tiny_policy, seed=3, dist=Dist(rank=1, world=2))
    trainer.iteration = 1
    save_checkpoint(folder, trainer, keep=2)
    assert not folder.checkpoints_path.exists()


def test_a_checkpoint_of_another_world_size_is_refused(tmp_path, tiny_policy):
    folder = run_folder(tmp_path)
    trainer = make_trainer(tiny_policy, seed=3, dist=Dist(rank=0, world=2))
    save_checkpoint(folder, trainer, keep=2)  # rank 0 of two at iteration 0: no collective
    path = folder.latest_checkpoint()[1]
    assert json.loads((path / "trainer.json").read_text())["world"] == 2
    fresh = make_trainer(tiny_policy, seed=11)
    with pytest.raises(
        RuntimeError,
        match=r"written by 2 processes; resume it with as many "
        r"\(this job has 1\)",
    ):
        load_checkpoint(path, fresh)


def older_checkpoint(tmp_path, tiny_policy, generators: int):
    """A checkpoint as releases before `world` wrote it: no world in trainer.json, one torch
    generator per rank, and the Python generator's state as lists."""
    folder = run_folder(tmp_path)
    trainer = make_trainer(tiny_policy, seed=3)
    advance(trainer)
    save_checkpoint(folder, trainer, keep=2)
    path = folder.latest_checkpoint()[1]
    state = json.loads((path / "trainer.json").read_text())
    del state["world"]
    (path / "trainer.json").write_text(json.dumps(state))
    rng = torch.load(path / "rng.pt", weights_only=False)
    version, internal, gauss = rng["python_rng"]
    rng["python_rng"] = [version, list(internal), gauss]
    rng["torch_generators"] = [rng["torch_generator"]] * generators
    torch.save(rng, path / "rng.pt")
    return path, trainer


def test_an_older_checkpoint_loads_its_list_shaped_generator_state(tmp_path, tiny_policy):
    path, trainer = older_checkpoint(tmp_path, tiny_policy, generators=1)
    fresh = make_trainer(tiny_policy, seed=11)
    load_checkpoint(path, fresh)
    assert fresh.rng.getstate() == trainer.rng.getstate()
    assert fresh.rng.random() == trainer.rng.random()


def test_an_older_checkpoint_of_two_ranks_is_refused_in_one(tmp_path, tiny_policy):
    path, _ = older_checkpoint(tmp_path, tiny_policy, generators=2)
    with pytest.raises(RuntimeError, match="written by 2 processes"):
        load_checkpoint(path, make_trainer(tiny_policy, seed=11))


def saved_at_one(tmp_path, tiny_policy):
    folder = run_folder(tmp_path)
    trainer = make_trainer(tiny_policy, seed=3)
    train_a_little(trainer)
    trainer.iteration = 1
    save_checkpoint(folder, trainer, keep=2)
    return folder.latest_checkpoint()[1], trainer


def test_weights_saved_in_several_shards_load_whole(tmp_path, tiny_policy):
    """A large model's save_pretrained writes model-0000N-of-0000M.safetensors; every shard counts."""
    path, trainer = saved_at_one(tmp_path, tiny_policy)
    whole = load_file(path / "model" / "model.safetensors")
    names = sorted(whole)
    (path / "model" / "model.safetensors").unlink()
    for n, part in enumerate((names[::2], names[1::2]), start=1):
        save_file({k: whole[k] for k in part}, path / "model" / f"model-0000{n}-of-00002.safetensors")
    fresh = make_trainer(tiny_policy, seed=11)
    load_checkpoint(path, fresh)
    assert_same_tensors(weights(fresh.model), weights(trainer.model))


@pytest.mark.parametrize("damage", ["a tensor missing", "a tensor unknown to the model"])
def test_weights_that_do_not_match_the_model_are_refused(tmp_path, tiny_policy, damage):
    path, _ = saved_at_one(tmp_path, tiny_policy)
    file = path / "model" / "model.safetensors"
    tensors = load_file(file)
    if damage == "a tensor missing":
        del tensors[next(k for k in sorted(tensors) if "layers.1.mlp" in k)]
    else:
        tensors["model.layers.9.extra.weight"] = torch.zeros(2)
    save_file(tensors, file)
    with pytest.raises(RuntimeError, match=f"checkpoint {path / 'model'} does not match the model"):
        load_checkpoint(path, make_trainer(tiny_policy, seed=11))


def test_the_refusal_names_at_most_three_of_the_tensors(tmp_path, tiny_policy):
    path, _ = saved_at_one(tmp_path, tiny_policy)
    file = path / "model" / "model.safetensors"
    tensors = load_file(file)
    layer = sorted(k for k in tensors if "layers.1." in k)
    assert len(layer) > 4
    save_file(
        {k: v for k, v in tensors.items() if k not in layer}
        | {f"model.layers.{9 + n}.extra.weight": torch.zeros(2) for n in range(5)},
        file,
    )
    with pytest.raises(RuntimeError) as refused:
        load_checkpoint(path, make_trainer(tiny_policy, seed=11))
    message = str(refused.value)
    assert sum(name in message for name in layer) == 3
    assert sum(f"layers.{9 + n}.extra" in message for n in range(5)) == 3


def test_whole_weights_are_refused_by_a_sharded_job(tmp_path, tiny_policy):
    path, _ = saved_at_one(tmp_path, tiny_policy)
    with pytest.raises(
        RuntimeError,
        match=r"holds whole weights \(dist.strategy=ddp\); resume it "
        "with dist.strategy=ddp, or start a new fsdp2 run from "
        "its model folder$",
    ):
        load_checkpoint(path, make_trainer(tiny_policy, seed=11, dist=Dist(sharded=True)))


def test_a_sharded_checkpoint_holds_shards_and_the_tokenizer_and_loads_into_a_plain_model(tmp_path, tiny_policy):
    """In one process DCP writes the whole state as one rank's shards (no process group)."""
    folder = run_folder(tmp_path)
    trainer = make_trainer(tiny_policy, seed=3, dist=Dist(sharded=True))
    train_a_little(trainer)
    advance(trainer)
    trainer.iteration, trainer.env_steps = 1, 5
    saved = {
        "weights": weights(trainer.model),
        "optimizer": trainer.optimizer.state_dict(),
        "rng": trainer.rng.getstate(),
    }
    save_checkpoint(folder, trainer, keep=2)
    path = folder.checkpoints_path / "iter-000001"
    assert {p.name for p in path.iterdir()} == {"sharded", "tokenizer", "rng.pt", "trainer.json"}
    assert has_sharded(path)
    assert (path / "tokenizer" / "tokenizer.json").is_file()
    assert json.loads((path / "trainer.json").read_text()) == {
        "iteration": 1,
        "env_steps": 5,
        "memory_marker": None,
        "has_model": True,
        "format": "sharded",
        "world": 1,
    }

    fresh = make_trainer(tiny_policy, seed=11)
    load_checkpoint(path, fresh)
    assert_same_tensors(weights(fresh.model), saved["weights"])
    assert_same_optimizer(fresh.optimizer.state_dict(), saved["optimizer"])
    assert fresh.rng.getstate() == saved["rng"]


def test_a_sharded_checkpoint_loads_at_another_world_size(tmp_path, tiny_policy):
    """DCP reshards, so the world a sharded checkpoint records is not checked on load (here
    two ranks' record of a one-process save, which holds the same whole state)."""
    folder = run_folder(tmp_path)
    trainer = make_trainer(tiny_policy, seed=3, dist=Dist(sharded=True))
    train_a_little(trainer)
    trainer.iteration = 1
    save_checkpoint(folder, trainer, keep=2)
    path = folder.latest_checkpoint()[1]
    state = json.loads((path / "trainer.json").read_text())
    (path / "trainer.json").write_text(json.dumps({**state, "world": 2}))
    fresh = make_trainer(tiny_policy, seed=11)
    assert load_checkpoint(path, fresh)["world"] == 2
    assert_same_tensors(weights(fresh.model), weights(trainer.model))


def test_a_sharded_checkpoint_at_iteration_zero_is_a_plain_one(tmp_path, tiny_policy):
    folder = run_folder(tmp_path)
    trainer = make_trainer(tiny_policy, seed=3, dist=Dist(sharded=True))
    save_checkpoint(folder, trainer, keep=2)
    path = folder.latest_checkpoint()[1]
    assert {p.name for p in path.iterdir()} == {"rng.pt", "trainer.json"}
    assert json.loads((path / "trainer.json").read_text())["format"] == "pretrained"


LORA = LoraSettings(rank=4, alpha=8, dropout=0.0, targets=("q_proj", "v_proj"))


def test_a_lora_checkpoint_holds_the_adapters_and_restores_them(tmp_path, tiny_policy):
    folder = run_folder(tmp_path)
    trainer = make_trainer(tiny_policy, seed=3, lora=LORA)
    train_a_little(trainer)
    trainer.iteration = 1
    adapters = {k: v for k, v in weights(trainer.model).items() if "lora_" in k}
    save_checkpoint(folder, trainer, keep=2)
    path = folder.latest_checkpoint()[1]
    assert (path / "model" / "adapter_model.safetensors").is_file()
    assert not (path / "model" / "model.safetensors").exists()
    fresh = make_trainer(tiny_policy, seed=11, lora=LORA)
    load_checkpoint(path, fresh)
    assert_same_tensors({k: v for k, v in weights(fresh.model).items() if "lora_" in k}, adapters)


def test_adapters_of_another_shape_are_refused(tmp_path, tiny_policy):
    folder = run_folder(tmp_path)
    trainer = make_trainer(tiny_policy, seed=3, lora=LORA)
    trainer.iteration = 1
    save_checkpoint(folder, trainer, keep=2)
    path = folder.latest_checkpoint()[1]
    other = LoraSettings(rank=4, alpha=8, dropout=0.0, targets=("q_proj",))  # no v_proj adapters
    with pytest.raises(RuntimeError, match=f"checkpoint {path / 'model'} does not match the adapters") as refused:
        load_checkpoint(path, make_trainer(tiny_policy, seed=11, lora=other))
    assert str(refused.value).count("v_proj") == 3  # four unexpected adapters; three are named
