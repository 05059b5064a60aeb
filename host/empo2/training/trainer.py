"""The EMPO² training loop (docs/paper.md §2), top to bottom in `Trainer.run`.

    empo2-host train --preset builtin                 # EMPO² on the built-in worlds
    empo2-host train --preset builtin-grpo            # the paper's GRPO (empo2/bench/arms.py)

Follows "Exploratory Memory-Augmented LLM Agent via Hybrid On- and Off-Policy Optimization"
(arXiv 2602.23008). Per iteration: draw B tasks, draw the rollout mode once (memory with p), roll
out N episodes per task in lockstep, give every state its novelty reward, let the policy write
one tip per episode into the memory, draw the update mode (off-policy with q for memory
rollouts), update. Where it deviates from the paper or the reference code:

1. The GRPO return adds the *mean* novelty reward of the episode (update.py, choice 1).
2. Retrieved entries are shown as distinct tip texts (rollout.py `distinct_tips`).
3. Memory-augmented evaluation runs on the *training* variations with the run's memory (the
   held-out variations have no tips of their own); memory-free evaluation runs on held-out ones.
4. Checkpoints make a resumed CPU run reproduce the uninterrupted one bit for bit: every random
   draw comes from generators saved in the checkpoint or seeded from the iteration (choice 6).
5. Under torchrun the B groups are dealt out to the ranks (distributed.py); each rank plays and
   reflects on its own episodes, then all episodes are gathered and the rest of the iteration is
   the same on every rank. Rank 0 alone writes the run folder.
6. Every episode samples from a generator of its own, seeded from the run seed, the iteration
   and its index in the iteration (rollout.episode_generator): its actions and tip do not depend
   on the rank that plays it, so a run resumed at another world size plays the same episodes.
7. With algo.memory_contrast=half a memory iteration plays the first half of each group with
   tips and the rest without (`group_modes`); the group keeps one GRPO baseline. The update
   scores each sample by its own prompts (update.py, choice 4): the tip-free half as on-policy
   samples, the tip half by the iteration's update mode. The paper draws the mode per batch.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import logging
import random
import shutil
import tempfile
import time
from pathlib import Path

import numpy as np
import torch

from .. import metric_keys as metric
from ..algo.intrinsic import make_intrinsic_reward
from ..config import ConfigError, TrainConfig, builtin_size
from ..envs.plugin import EnvironmentFault
from ..envs.pool import EnvPool
from ..envs.registry import make_env, tasks_of
from ..memory.embedding import SentenceEmbedder
from ..memory.store import EpisodeTip, MemoryStore
from ..one_sentence import sentence
from ..policy.model import AdapterFreeView, LoraSettings, is_peft, load_policy
from ..policy.saved_folder import prompt_shape_difference
from ..policy.scripted_writer import ScriptedTipWriter
from ..run_folder.folder import RunFolder
from ..trackers import mirrored
from .checkpoint import load_checkpoint, save_checkpoint
from .distributed import Dist
from .learning_signals import learning_signals
from .rollout import (
    MEMORY,
    MEMORY_FREE,
    Episode,
    RolloutSettings,
    add_intrinsic_rewards,
    episode_generator,
    roll_out,
    tip_entries,
    write_tips,
)
from .run_control import RecordedProgress, RunControl, TrainerHooks
from .stored_episode import ended_record, ended_summary, episode_record, episode_summary
from .update import OFF_POLICY, ON_POLICY, ON_POLICY_WITH_TIPS, update_policy

log = logging.getLogger("empo2.trainer")

# Keys that keep the sampling streams of training rollouts and of evaluation apart.
ROLLOUT_STREAM, EVAL_STREAM = 0, 1


def resolve_device(name: str, local_rank: int = 0) -> torch.device:
    if name == "auto":
        name = "cuda" if torch.cuda.is_available() else "cpu"
    if name == "cuda":
        return torch.device("cuda", local_rank)
    return torch.device(name)


def resolve_model(name: str, progress=None) -> str:
    """The folder of a policy.model: 'builtin' or 'builtin:<size>' is the built-in policy of that
    size (built into the cache when missing), a packaged model's name (policy/pretrained.py) its
    conversion in the cache (converted when missing), anything else is itself."""
    size = builtin_size(name)
    if size is not None:
        from ..policy.builtin import ensure_builtin_policy, recipe_for

        return str(ensure_builtin_policy(recipe_for(size), progress=progress))
    from ..policy.pretrained import ensure_packaged_policy, is_packaged_model

    if is_packaged_model(name):
        return str(ensure_packaged_policy(name))
    return name


def kl_reference(model, model_path: str, device: str, dtype: str, shard=None):
    """The KL reference (β > 0), the initial policy: under LoRA the base beneath the adapters (no
    copy), else a frozen copy, passed through `shard` (the policy's own sharding) when given: a
    second full 7B copy per rank would not fit."""
    if is_peft(model):
        return AdapterFreeView(model)
    reference = frozen_copy(model_path, device, dtype)
    return shard(reference) if shard is not None else reference


def frozen_copy(model_path: str, device: str, dtype: str):
    """The model at `model_path`, in eval mode with no trainable parameter."""
    model, _ = load_policy(model_path, device=device, dtype=dtype)
    return model.eval().requires_grad_(False)


def initial_tip_writer(config: TrainConfig, device: str = "cpu"):
    """The tips' writer outside training (evaluation trials): with memory.tip_writer=initial the
    warm start, frozen; with 'scripted' the built-in worlds; None with 'policy' (the evaluated
    model writes its own)."""
    if config.memory.tip_writer == "scripted":
        return ScriptedTipWriter()
    if config.memory.tip_writer != "initial":
        return None
    return frozen_copy(resolve_model(config.policy.model), device, config.policy.dtype)


def group_modes(n: int, memory_mode: bool, contrast: str = "off") -> list[str]:
    """The rollout mode of each of a group's n rollouts: all memory-free, all memory, or with
    algo.memory_contrast=half the first n // 2 with tips and the rest without (choice 7)."""
    if not memory_mode:
        return [MEMORY_FREE] * n
    with_tips = n // 2 if contrast == "half" else n
    return [MEMORY] * with_tips + [MEMORY_FREE] * (n - with_tips)


class Trainer:
    def __init__(
        self,
        config: TrainConfig,
        folder: RunFolder,
        hooks: TrainerHooks | None = None,
        control: RunControl | None = None,
        embedder: SentenceEmbedder | None = None,
        dist: Dist | None = None,
    ):
        self.config = config
        self.folder = folder
        self.dist = dist or Dist.from_env()
        # Rank 0 tells the hooks and writes progress.json for hosts that follow the run's files.
        self.hooks = RecordedProgress(hooks or TrainerHooks(), folder) if self.dist.main else TrainerHooks()
        self.control = control or RunControl()
        self.device = resolve_device(config.policy.device, self.dist.local_rank)
        self.embedder = embedder or SentenceEmbedder(device="cpu")
        # Environments live for the whole run: a ScienceWorld one is a JVM (envs/pool.py).
        self.envs = EnvPool(lambda: make_env(config.env), workers=config.env.workers)
        try:
            self.env = self.envs.take(1)[0]
            config.env.tasks = tasks_of(config.env, self.env)  # empty: all the environment's
        except (ConfigError, EnvironmentFault) as err:
            self._environment_failed(err)
            raise
        unknown = [t for t in config.env.tasks if t not in self.env.tasks()]
        if unknown:
            raise ConfigError(
                f"config key 'env.tasks' names unknown {config.env.name} task(s) "
                f"{', '.join(unknown)} (known: {', '.join(self.env.tasks())})"
            )
        self.train_variations = config.env.train_variations or None
        self.model_path = resolve_model(config.policy.model)
        p = config.policy
        shape_note = prompt_shape_difference(Path(self.model_path), p.history_steps, p.observation_words)
        if shape_note and self.dist.main:
            log.warning(shape_note)
        lora = LoraSettings(p.lora_rank, p.lora_alpha, p.lora_dropout, tuple(p.lora_targets)) if p.lora_rank else None
        # New LoRA adapters draw their initial weights from torch's global generator: seeded by
        # the run's seed, so two runs of one config start from the same adapters whatever the
        # process did before (a resumed run then loads its own from the checkpoint).
        torch.manual_seed(config.seed)
        self.model, self.tokenizer = load_policy(
            self.model_path,
            device=str(self.device),
            dtype=p.dtype,
            gradient_checkpointing=p.gradient_checkpointing,
            lora=lora,
        )
        self.model.eval()
        if config.dist.strategy == "fsdp2":  # before the optimizer: it must see the shards
            self.model = self._shard(self.model)
            self.dist = dataclasses.replace(self.dist, sharded=True)
        self.optimizer = torch.optim.AdamW(
            [p for p in self.model.parameters() if p.requires_grad],
            lr=config.algo.lr,
            weight_decay=config.algo.weight_decay,
        )
        # The initial policy, kept only when it is used (a 7B copy is not free): the KL
        # reference (β > 0) and, with memory.tip_writer=initial, the tips' writer.
        initial = None
        if config.algo.kl_beta > 0 or config.memory.tip_writer == "initial":
            initial = kl_reference(
                self.model, self.model_path, str(self.device), p.dtype, self._shard if self.dist.sharded else None
            )
        self.reference = initial if config.algo.kl_beta > 0 else None
        self._initial = initial
        self.intrinsic = make_intrinsic_reward(
            config.algo.intrinsic,
            **({"threshold": config.algo.novelty_threshold} if config.algo.intrinsic == "paper" else {}),
        )
        # Python draws (tasks, modes) and the update's minibatch order are the same on every rank;
        # sampling draws from per-episode generators (choice 6).
        self.rng = random.Random(config.seed)
        self.generator = torch.Generator().manual_seed(config.seed)
        self.iteration = 0
        self.env_steps = 0
        self.memory: MemoryStore | None = None

    def _shard(self, model):
        from ..policy.model import MIXED_BF16
        from .sharding import shard_model

        return shard_model(
            model,
            self.device,
            mixed_bf16=self.config.policy.dtype == MIXED_BF16,
            cpu_offload=self.config.dist.cpu_offload,
        )

    # -- setup and resume ------------------------------------------------------------------------

    def start(self, resume: bool) -> None:
        """Opens the memory and, when resuming, restores the newest checkpoint."""
        torch.manual_seed(self.config.seed)
        marker = None
        if resume:
            latest = self.folder.latest_checkpoint()
            if latest is not None:
                state = load_checkpoint(latest[1], self)
                marker = state["memory_marker"]
                self.iteration = state["iteration"]
                self.env_steps = state.get("env_steps", 0)
            if self.dist.main:
                self.folder.rollback_to(self.iteration)
        if self.dist.main:
            self.memory = MemoryStore.open(
                self.folder.memory_path,
                self.embedder,
                capacity=self.config.memory.capacity,
                rollback_to=marker if resume else None,
            )
        self.dist.barrier()  # rank 0 has cut the memory log back to the checkpoint
        if not self.dist.main:
            self.memory = self._memory_replica(resume)
        if not resume or self.folder.latest_checkpoint() is None:
            self.checkpoint()  # iteration 0: the resume point of a run killed in iteration 1

    def _memory_replica(self, resume: bool) -> MemoryStore:
        """Rank 0's memory as an in-memory store: replayed from a copy of its log (the log itself
        is locked by its one writer), then every rank adds the same tips in the same order."""
        if not resume or not self.folder.memory_path.exists():
            return MemoryStore.open(None, self.embedder, capacity=self.config.memory.capacity)
        with tempfile.TemporaryDirectory(prefix="empo2-replica-") as scratch:
            copy = Path(scratch) / "memory"
            shutil.copytree(self.folder.memory_path, copy)
            store = MemoryStore.open(copy, self.embedder, capacity=self.config.memory.capacity)
            store.close()  # no log: later tips stay in memory
        return store

    # -- the loop --------------------------------------------------------------------------------

    def run(self, resume: bool = False) -> None:
        """Trains until config.iterations or the env-step budget, from the newest checkpoint when
        resuming. Rank 0 holds the run folder's writer lock throughout: a second writer (another
        `train`/`resume`, or a host resuming the same run) is refused before it rolls anything
        back. Rank 0 mirrors the run folder to the trackers of config.report_to meanwhile (a
        thread that follows its files; trackers/mirror.py)."""
        with (
            self.folder.writer_lock() if self.dist.main else contextlib.nullcontext(),
            mirrored(self.folder, self.config.report_to if self.dist.main else []),
        ):
            try:
                self._run(resume)
            except EnvironmentFault as fault:
                self._environment_failed(fault)
                raise
            finally:
                if self.dist.main:
                    self.folder.write_progress(None)  # it trains no more: nothing in progress

    def _run(self, resume: bool) -> None:
        cfg, algo = self.config, self.config.algo
        self.start(resume)
        self._set_state("running", self.iteration)
        self.hooks.on_state("running", self.iteration)
        while self.iteration < cfg.iterations and not self._budget_spent():
            if self.control.wait_if_paused():
                if self.control.interrupted:
                    self._checkpoint_if_missing()  # a resume then loses no finished iteration
                self._finish("interrupted" if self.control.interrupted else "stopped")
                return
            iteration = self.iteration + 1

            # 1–2. B tasks, N rollouts each; rollout and update modes drawn once per iteration.
            tasks = self._sample_tasks()
            memory_mode = self.rng.random() < algo.p_memory
            off_policy = self.rng.random() < algo.q_off_policy
            update_mode = (OFF_POLICY if off_policy else ON_POLICY_WITH_TIPS) if memory_mode else ON_POLICY

            # 3–4. Roll out, let the policy write its tips, reward novelty.
            episodes, after, timings, split = self.play(iteration, tasks, memory_mode, update_mode=update_mode)

            # 5–6. Update θ with the mode's ratio (Table 3), masking and dual clip.
            clock = time.perf_counter()
            self.hooks.on_progress(iteration, "update", 0, 1)
            stats = self.update(
                episodes,
                update_mode,
                on_step=functools.partial(self.hooks.on_progress, iteration, "update"),
            )
            timings["update"] = self._lap(clock)

            evaluation = {}
            last = iteration == cfg.iterations or 0 < cfg.max_env_steps <= self.env_steps + sum(
                len(ep.steps) for ep in episodes
            )
            if cfg.eval.every and (iteration % cfg.eval.every == 0 or last):
                self.hooks.on_progress(iteration, "evaluation", 0, 1)
                evaluation = self.evaluate(iteration)
            timings["evaluation"] = self._lap(clock) - timings["update"]

            self.record(iteration, episodes, after, memory_mode, update_mode, stats, evaluation, timings, split)
            if iteration % cfg.checkpoint_every == 0 or iteration == cfg.iterations or self._budget_spent():
                self.checkpoint()
            self._set_state("running", iteration)
        self._finish("finished")

    # -- pieces of an iteration ------------------------------------------------------------------

    def play(
        self,
        iteration: int,
        tasks: list[tuple[str, int]],
        memory_mode: bool,
        group_size: int | None = None,
        tips: bool = True,
        update_mode: str | None = None,
    ):
        """Steps 3–4 for `tasks`, `group_size` rollouts each: roll out in lockstep (tips retrieved
        every step in memory mode; with several ranks each plays its own groups), let the
        current policy write a tip per episode (unless `tips` is False), reward novelty.
        With `update_mode` (drawn before the rollout) each episode is reported to the hooks'
        `on_episode` as it ends. Returns (episodes, observations after each step, timings,
        rollout split)."""
        cfg, n = self.config, group_size or self.config.algo.group_size
        timings: dict[str, float] = {}
        clock = time.perf_counter()
        modes = group_modes(n, memory_mode, cfg.algo.memory_contrast)
        episodes = [
            Episode(
                id=f"i{iteration:06d}-e{g * n + k:04d}", task=task, variation=variation, group=g, rollout_mode=modes[k]
            )
            for g, (task, variation) in enumerate(tasks)
            for k in range(n)
        ]
        mine = [e for e, ep in enumerate(episodes) if self.dist.owns_group(ep.group)]
        my_episodes = [episodes[e] for e in mine]
        samplers = [episode_generator(cfg.seed, ROLLOUT_STREAM, iteration, e) for e in mine]
        split: dict[str, float] = {}  # rollout time by phase: generation, environment, ...
        with self.dist.gathered(self.model):  # ranks play different numbers of steps
            my_after = roll_out(
                self.envs.take(len(my_episodes)),
                my_episodes,
                self.model,
                self.tokenizer,
                self._settings(train=True),
                samplers,
                self.memory if memory_mode else None,
                on_step=lambda t, _: self.hooks.on_progress(iteration, "rollout", t, cfg.env.max_steps),
                timings=split,
                on_episode_end=self._episode_reporter(iteration, my_episodes, update_mode),
            )
            timings["rollout"] = self._lap(clock)
            # No tips where nothing will read them (memory.write_tips=auto with p = 0: the
            # paper's GRPO), nor where the caller asks for none (a rerun).
            if tips and (cfg.memory.write_tips == "always" or cfg.algo.p_memory > 0):
                # Tips written of the iteration's; with several ranks rank 0 (the one with hooks)
                # writes only its share, so no count (as for the episodes, _episode_reporter).
                count = len(my_episodes) if not self.dist.active else None
                self.hooks.on_progress(iteration, "reflection", 0, count or 1)
                with self._tip_writer() as writer:
                    write_tips(
                        my_episodes,
                        my_after,
                        writer,
                        self.tokenizer,
                        self._settings(train=True),
                        cfg.policy.max_tip_tokens,
                        samplers,
                        on_written=None
                        if count is None
                        else (lambda n: self.hooks.on_progress(iteration, "reflection", n, count)),
                    )
            timings["tips"] = self._lap(clock, timings)
        episodes, after = self.dist.gather_episodes(my_episodes, my_after, mine)
        self.hooks.on_progress(iteration, "novelty", 0, 1)
        add_intrinsic_rewards(episodes, after, self.intrinsic, self.embedder)
        timings["intrinsic"] = self._lap(clock, timings)
        self._store_tips(iteration, episodes, after)  # the same tips, in the same order, on every rank
        timings["tips"] += self._lap(clock, timings)
        return episodes, after, timings, split

    def _episode_reporter(self, iteration: int, episodes: list[Episode], update_mode: str | None):
        """roll_out's `on_episode_end`: episodes[i]'s summary and record to the hooks as it ends, or None
        when there is nothing to report. With several ranks each rank plays only its own groups
        and only rank 0 has hooks: its share would count up to its own total, never the
        iteration's, so a distributed run reports its episodes when the iteration is written."""
        if update_mode is None or self.dist.active:
            return None
        ended = 0

        def report(i: int, after: list[str]) -> None:
            nonlocal ended
            ended += 1
            self.hooks.on_episode(
                iteration,
                ended_summary(episodes[i], update_mode, iteration),
                ended_record(episodes[i], update_mode, iteration, after),
                ended,
                len(episodes),
            )

        return report

    @contextlib.contextmanager
    def _tip_writer(self):
        """The model that writes tips (memory.tip_writer): the policy, or the frozen initial one
        (under LoRA the policy with its adapters switched off)."""
        if self.config.memory.tip_writer == "policy":
            yield self.model
        elif self.config.memory.tip_writer == "scripted":
            yield ScriptedTipWriter()
        elif is_peft(self.model):
            with self.model.disable_adapter():
                yield self.model
        else:  # under FSDP2 the copy is sharded like the policy: whole on every rank to generate
            with self.dist.gathered(self._initial):
                yield self._initial

    def update(self, episodes: list[Episode], update_mode: str, on_step=None) -> dict[str, float]:
        """Step 6: the optimizer steps of one iteration (update.py); returns their statistics.
        on_step(done, total) after each optimizer step."""
        algo = self.config.algo
        return update_policy(
            self.model,
            self.optimizer,
            episodes,
            update_mode,
            algo,
            self.tokenizer.pad_token_id,
            self.generator,
            self.reference,
            micro_batch=algo.micro_batch,
            dist=self.dist,
            on_step=on_step,
        )

    def record(self, iteration, episodes, after, memory_mode, update_mode, stats, evaluation, timings, split) -> None:
        """Counts the iteration as done and writes its trajectories and metrics (rank 0)."""
        self.iteration = iteration
        self.env_steps += sum(len(ep.steps) for ep in episodes)
        if self.dist.main:
            record = self._metrics(iteration, episodes, memory_mode, update_mode, stats, evaluation, timings, split)
            summaries = [episode_summary(ep, update_mode, iteration) for ep in episodes]
            records = [episode_record(ep, update_mode, iteration, after[e]) for e, ep in enumerate(episodes)]
            self.folder.write_trajectories(iteration, records, summaries)
            self.folder.append_metrics(record)
            self.hooks.on_trajectories(iteration, summaries)
            self.hooks.on_metrics(record)

    def checkpoint(self) -> None:
        save_checkpoint(self.folder, self, keep=self.config.keep_checkpoints)

    def _budget_spent(self) -> bool:
        return 0 < self.config.max_env_steps <= self.env_steps

    def _sample_tasks(self) -> list[tuple[str, int]]:
        pairs = [
            (t, v) for t in self.config.env.tasks for v in (self.train_variations or self.env.variations(t, "train"))
        ]
        return [self.rng.choice(pairs) for _ in range(self.config.algo.batch_tasks)]

    def _settings(self, train: bool) -> RolloutSettings:
        return RolloutSettings.from_config(self.config, self.env, train)

    def _set_state(self, state: str, iteration: int) -> None:
        if self.dist.main:
            self.folder.set_state(state, iteration=iteration)

    def _environment_failed(self, err: Exception) -> None:
        """The run ends `failed` with the environment's one sentence (run.json and the log);
        the iterations and checkpoints written before stay as they are."""
        if self.dist.main:
            log.error("the run failed: %s", sentence(err))
            self.folder.set_state("failed", error=sentence(err))

    def _store_tips(self, iteration: int, episodes: list[Episode], after: list[list[str]]) -> None:
        """The iteration's tips into the memory as one batch (MemoryStore.add_episode_tips): one
        embedding call for all their keys and one append to the log, not a call and two fsyncs
        per tip. Its progress, `storing`, counts the tips stored of those written."""
        written = [e for e, ep in enumerate(episodes) if ep.tip]
        if not written:
            return
        self.hooks.on_progress(iteration, "storing", 0, len(written))
        settings = self._settings(train=True)
        tips = self.memory.add_episode_tips(
            [
                EpisodeTip(
                    episodes[e].variation_key,
                    episodes[e].tip,
                    steps=tip_entries(episodes[e], after[e], settings),
                    score=episodes[e].final_score,
                    provenance={
                        "run": self.folder.run_id,
                        "iteration": iteration,
                        "episode": episodes[e].id,
                        "step": len(episodes[e].steps),
                        "score": episodes[e].final_score,
                    },
                )
                for e in written
            ]
        )
        for e, tip in zip(written, tips):
            episodes[e].tip_id = tip.id
        self.hooks.on_progress(iteration, "storing", len(written), len(written))

    def evaluate(self, iteration: int) -> dict:
        """Memory-free success on held-out variations; memory-augmented on training ones (each
        rank plays every world-th episode; the results are gathered)."""
        cfg = self.config
        held_out = [
            (t, v)
            for t in cfg.env.tasks
            for v in (cfg.env.test_variations or self.env.variations(t, "test"))[: cfg.eval.max_variations]
        ]
        trained = [(t, v) for t in cfg.env.tasks for v in (self.train_variations or self.env.variations(t, "train"))]
        result = {}
        for s, (name, pairs, memory) in enumerate(zip(metric.EVAL_SETTINGS, (held_out, trained), (None, self.memory))):
            episodes = [
                Episode(
                    id=f"eval-{name}-{k}", task=t, variation=v, group=k, rollout_mode=MEMORY if memory else MEMORY_FREE
                )
                for k, (t, v) in enumerate(pairs * cfg.eval.episodes_per_variation)
            ]
            episodes = [ep for ep in episodes if self.dist.owns_group(ep.group)]
            samplers = [episode_generator(cfg.seed, EVAL_STREAM, iteration, s, ep.group) for ep in episodes]
            with self.dist.gathered(self.model):
                roll_out(
                    self.envs.take(len(episodes)),
                    episodes,
                    self.model,
                    self.tokenizer,
                    self._settings(train=False),
                    samplers,
                    memory,
                )
            outcomes = [
                o for part in self.dist.gather([(ep.task, ep.success, ep.final_score) for ep in episodes]) for o in part
            ]
            result[metric.eval_success(name)] = float(np.mean([success for _, success, _ in outcomes]))
            result[metric.eval_score(name)] = float(np.mean([score for _, _, score in outcomes]))
            for task in cfg.env.tasks:
                mine = [success for t, success, _ in outcomes if t == task]
                result[metric.eval_success(name, task)] = float(np.mean(mine)) if mine else 0.0
        return result

    def _metrics(self, iteration, episodes, memory_mode, update_mode, stats, evaluation, timings, split) -> dict:
        scores = [ep.final_score for ep in episodes]
        successes = [float(ep.success) for ep in episodes]
        action_tokens = sum(len(s.action_ids) for ep in episodes for s in ep.steps)
        steps = [s for ep in episodes for s in ep.steps]
        # Sequence tokens (prompt + action) per update pass, a proxy for the update's work.
        update_tokens = self.config.algo.ppo_epochs * sum(
            len(s.prompt_ids) + len(s.action_ids) for s in steps if s.action_ids
        )
        rollout_mode = MEMORY if memory_mode else MEMORY_FREE
        # Per rollout mode: a contrast group (algo.memory_contrast=half) holds both.
        per_mode = {}
        for m in (MEMORY, MEMORY_FREE):
            played = [ep for ep in episodes if ep.rollout_mode == m]
            if played:
                per_mode[metric.rollout_return(metric.mode_segment(m))] = float(
                    np.mean([ep.final_score for ep in played])
                )
                per_mode[metric.rollout_success(metric.mode_segment(m))] = float(np.mean([ep.success for ep in played]))
        tipped_steps = [s for ep in episodes if ep.rollout_mode == MEMORY for s in ep.steps]
        record = {
            metric.ITERATION: iteration,
            metric.TIME: time.time(),
            metric.ROLLOUT_MODE: rollout_mode,
            metric.UPDATE_MODE: update_mode,
            **per_mode,
            metric.ROLLOUT_RETURN: float(np.mean(scores)),
            metric.ROLLOUT_SUCCESS: float(np.mean(successes)),
            metric.ROLLOUT_STEPS: len(steps),
            metric.ENV_STEPS: self.env_steps,
            metric.MEMORY_TIPS: self.memory.count(),
            metric.MEMORY_RETRIEVAL_HITS: float(np.mean([len(s.tip_ids) > 0 for s in tipped_steps]))
            if tipped_steps
            else 0.0,
            metric.MEMORY_TIPS_PER_STEP: float(np.mean([len(s.tip_ids) for s in tipped_steps]))
            if tipped_steps
            else 0.0,
            metric.REWARD_INTRINSIC: float(np.mean([s.intrinsic for s in steps])),
            metric.TIME_TOTAL: sum(timings.values()),
            metric.THROUGHPUT_ROLLOUT: action_tokens / max(timings["rollout"], 1e-9),
            metric.THROUGHPUT_UPDATE: update_tokens / max(timings["update"], 1e-9),
            **{metric.TIME_PREFIX + k: v for k, v in timings.items()},
            **{metric.ROLLOUT_TIME_PREFIX + k: v for k, v in split.items()},
            **{metric.UPDATE_PREFIX + k: v for k, v in stats.items()},
            **learning_signals(episodes, memory_mode, update_mode, stats, self.config.algo, self.memory),
            **evaluation,
        }
        return record

    def _checkpoint_if_missing(self) -> None:
        """With checkpoint_every > 1 the last finished iteration may have none (single process
        only: a distributed checkpoint needs every rank, and only the host interrupts)."""
        if not self.dist.active and self.iteration not in self.folder.checkpoint_iterations():
            self.checkpoint()

    def close(self) -> None:
        """Stops the environments' simulators (ScienceWorld JVMs also die with the process)."""
        self.envs.close()

    def _finish(self, state: str) -> None:
        self._set_state(state, self.iteration)
        self.hooks.on_state(state, self.iteration)

    @staticmethod
    def _lap(start: float, timings: dict | None = None) -> float:
        return time.perf_counter() - start - (sum(timings.values()) if timings else 0.0)
