"""One episode played turn by turn and token by token, for VS Code's debugger (docs/debugging.md).

A debug session holds one environment, one policy (its own copy, loaded read-only from a
checkpoint or a policy folder) and, in memory mode, a way to retrieve tips. Every turn is built
by the training code itself (`rollout.step_prompts`, `generation.generate_from_ids`,
`TextEnv.step`), so what the debugger shows is what a rollout would have done.

Stepping model:
- A turn is prepared (prompts, tips, the sampled action and its per-token scores), then
  executed in the environment. `step("token")` reveals the prepared turn's tokens one at a time
  (the action is sampled in one go by the rollout's decoder, so stepping walks through tokens
  already drawn; nothing is re-sampled); `step("turn")` executes the rest of the turn.
- `force(text)` executes a given action instead of sampling one (teacher-forced and scored).
- `rewind(k)` resets the environment with the session's seed and re-executes turns 0..k-1, so
  turn k plays again (with the tips as they are now, e.g. after an edit).
- A replay session plays a recorded episode: each turn shows the recorded prompt, tips and
  action, re-scored by the session's policy (replay.py); a forced action ends the replay there.
  So does an observation the environment shows other than the recorded one (its reset or step is
  not deterministic in the seed): the recorded turns after it were played from a state the
  environment is not in, so `observation_mismatch` says where and with which texts, and the
  policy plays on from the environment's own state.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass

import numpy as np
import torch

from ..modes import MEMORY
from ..policy.generation import generate_from_ids, sequence_alternatives
from ..policy.prompting import with_tips
from ..policy.tokenizer import encode_response
from ..training.rollout import Episode, RolloutSettings, StepRecord, step_prompts

TOP_K = 5


class DebugStateError(Exception):
    """A request that the session's state does not allow (one sentence for the user)."""


@dataclass
class Token:
    id: int
    text: str
    logprob: float  # under the prompt the action came from (with tips in memory mode)
    logprob_no_tips: float  # the same token without the tip block
    alternatives: list[tuple[int, str, float]]  # the top-5 (id, text, logprob), best first
    ratio: float | None = None  # replayed training episode: the update's importance ratio
    masked: bool | None = None  # replayed training episode: dropped by low-probability masking


@dataclass
class Turn:
    index: int
    observation: str
    user_text: str
    prompt_ids: list[int]
    prompt_ids_no_tips: list[int]
    tips: list[str]
    tip_ids: list[str]
    tip_similarity: list[float | None]
    tip_score: list[float | None]
    action: str
    action_ids: list[int]
    tokens: list[Token]
    forced: bool = False
    executed: bool = False
    executed_action: str = ""
    reward: float | None = None
    score: float | None = None
    intrinsic: float | None = None
    next_observation: str | None = None
    done: bool = False
    success: bool = False
    replay: dict | None = None  # replay.py: what the recording said about this turn
    greedy_differs: bool = False  # greedy decoding would not produce this action

    @property
    def prompt(self) -> str:
        return with_tips(self.user_text, self.tips)

    @property
    def corrected(self) -> bool:
        return self.executed and self.executed_action != self.action

    @property
    def min_logprob(self) -> float | None:
        return min((t.logprob for t in self.tokens), default=None)


@dataclass
class Pending:
    turn: Turn
    revealed: int = 0


@dataclass
class SessionSpec:
    """What a session plays: the launch's choices after resolution (launch.py)."""

    task: str
    variation: int
    seed: int
    mode: str  # one of modes.ROLLOUT_MODES
    settings: RolloutSettings
    record: dict | None = None  # the recorded episode to replay
    replay_scores: list[dict] | None = None


class DebugSession:
    def __init__(self, spec: SessionSpec, env, model, tokenizer, intrinsic, embedder):
        self.spec = spec
        self.env, self.model, self.tokenizer = env, model, tokenizer
        self.intrinsic, self.embedder = intrinsic, embedder
        self.generator = torch.Generator().manual_seed(spec.seed)
        self.turns: list[Turn] = []
        self.pending: Pending | None = None
        self._intrinsic_before: list[dict] = []
        self._reset(0)

    # -- state -------------------------------------------------------------------------------------

    @property
    def done(self) -> bool:
        return bool(self.turns) and self.turns[-1].done

    @property
    def replaying(self) -> bool:
        """Still on the recording: a replay session none of whose turns so far was forced, whose
        environment has shown every recorded observation so far."""
        record = self.spec.record
        return (
            record is not None
            and len(self.turns) < len(record["steps"])
            and not any(t.forced for t in self.turns)
            and self.observation_mismatch is None
        )

    @property
    def observation_mismatch(self) -> dict | None:
        """The first observation of a replay that differs from the recording's, as the protocol's
        DebugObservationMismatch (turn: the turn whose action it answered, 0 for the reset's
        too; None when none does so far)."""
        record = self.spec.record
        if record is None or not record["steps"]:
            return None
        recorded = record["steps"][0]["observation"]
        if self.first_observation != recorded:
            return _mismatch(
                0,
                recorded,
                self.first_observation,
                f"the environment's reset with seed {self.spec.seed} showed another first "
                "observation than the recorded one",
            )
        for turn in self.turns:
            if turn.replay is None or turn.replay.get("observationMatches") is not False:
                continue
            return _mismatch(
                turn.index,
                turn.replay["recordedNextObservation"],
                turn.next_observation,
                f"the environment answered the recorded action {turn.action!r} with "
                "another observation than the recorded one",
            )
        return None

    @property
    def variation_key(self) -> str:
        return self.episode.variation_key

    def _reset(self, keep: int) -> None:
        """Environment reset with the session's seed, then turns 0..keep-1 re-executed."""
        self.episode = Episode(
            id="debug",
            task=self.spec.task,
            variation=self.spec.variation,
            group=self.spec.seed,
            rollout_mode=self.spec.mode,
        )
        self.observation, info = self.env.reset(self.spec.task, self.spec.variation, seed=self.spec.seed)
        self.episode.description = info.task_description
        self.first_observation = self.observation
        self.after: list[str] = []
        kept, self.turns = self.turns[:keep], []
        # The novelty archive as it was before turn `keep`: kept turns keep their rewards.
        if keep < len(self._intrinsic_before):
            self.intrinsic.load_state_dict(copy.deepcopy(self._intrinsic_before[keep]))
        self._intrinsic_before = self._intrinsic_before[:keep]
        for turn in kept:
            obs, _, _, _ = self.env.step(turn.action)
            if obs != turn.next_observation:
                raise DebugStateError(
                    f"the environment did not reproduce turn {turn.index} when "
                    "replaying it; it is not deterministic for this seed."
                )
            self._record_step(turn)

    def _record_step(self, turn: Turn) -> None:
        self.episode.steps.append(
            StepRecord(
                observation=turn.observation,
                user_text=turn.user_text,
                tips=turn.tips,
                tip_ids=turn.tip_ids,
                prompt_ids=turn.prompt_ids,
                prompt_ids_no_tips=turn.prompt_ids_no_tips,
                action=turn.action,
                executed_action=turn.executed_action,
                action_ids=turn.action_ids,
                behaviour_logprobs=[t.logprob for t in turn.tokens],
                reward=turn.reward or 0.0,
                intrinsic=turn.intrinsic or 0.0,
                score=turn.score or 0.0,
            )
        )
        self.after.append(turn.next_observation)
        self.observation = turn.next_observation
        self.turns.append(turn)

    # -- stepping ------------------------------------------------------------------------------------

    def step(self, unit: str, store=None) -> tuple[Turn, bool]:
        """One token ("token") or the rest of the turn ("turn"); returns (turn, executed)."""
        self._check_not_done()
        if self.pending is None:
            self.pending = Pending(self._prepare(store))
            if unit == "token":
                self.pending.revealed = min(1, len(self.pending.turn.tokens))
                return self.pending.turn, False
        if unit == "token" and self.pending.revealed < len(self.pending.turn.tokens):
            self.pending.revealed += 1
            return self.pending.turn, False
        return self._execute(), True

    def force(self, action: str, store=None) -> Turn:
        """Executes `action` as the next turn (a pending sampled turn is dropped)."""
        self._check_not_done()
        self.pending = None
        turn = self._prepare(store, forced=action)
        self.pending = Pending(turn, len(turn.tokens))
        return self._execute()

    def rewind(self, index: int) -> Turn | None:
        """Back to just before turn `index`; returns that turn as it was (None when it was never
        played)."""
        if not 0 <= index <= len(self.turns):
            raise DebugStateError(f"there is no turn {index}; the episode has {len(self.turns)} turns.")
        previous = self.turns[index] if index < len(self.turns) else None
        self.pending = None
        self._reset(index)
        return previous

    def _check_not_done(self) -> None:
        if self.done:
            raise DebugStateError("the episode has ended; restart a turn or start a new session.")

    # -- building a turn -----------------------------------------------------------------------------

    def _prepare(self, store, forced: str | None = None) -> Turn:
        index = len(self.turns)
        if self.replaying and forced is None:
            return self._recorded_turn(index)
        retrieve = None
        if self.spec.mode == MEMORY and store is not None:
            s = self.spec.settings

            def retrieve(user_text):
                return store.retrieve(
                    self.variation_key,
                    [user_text],
                    threshold=s.similarity_threshold,
                    top_k=s.top_k,
                    keep_edited_actions=s.keep_edited_tip_actions,
                )[0]

        user_text, no_tip_ids, prompt_ids, (tips, tip_ids), retrieved = step_prompts(
            self.tokenizer, self.episode, self.after, self.observation, self.spec.settings, retrieve
        )
        best = {}
        for r in retrieved:  # distinct_tips keeps each tip's best-ranked entry: the first
            best.setdefault(r.tip_id, r)
        if forced is None:
            gen = generate_from_ids(
                self.model,
                self.tokenizer,
                [prompt_ids],
                self.spec.settings.max_action_tokens,
                self.spec.settings.temperature,
                self.generator,
            )[0]
            action, action_ids, behaviour = gen.text, gen.token_ids, gen.logprobs
        else:
            action, action_ids, behaviour = forced.strip(), encode_response(self.tokenizer, forced), None
        tokens, differs = self.score(prompt_ids, no_tip_ids, action_ids, behaviour)
        return Turn(
            index=index,
            observation=self.observation,
            user_text=user_text,
            prompt_ids=prompt_ids,
            prompt_ids_no_tips=no_tip_ids,
            tips=tips,
            tip_ids=tip_ids,
            tip_similarity=[best[i].similarity if i in best else None for i in tip_ids],
            tip_score=[best[i].score if i in best else None for i in tip_ids],
            action=action,
            action_ids=action_ids,
            tokens=tokens,
            forced=forced is not None,
            greedy_differs=differs,
        )

    def _recorded_turn(self, index: int) -> Turn:
        step = self.spec.record["steps"][index]
        scores = self.spec.replay_scores[index]
        tips = list(step.get("tips") or [])
        return Turn(
            index=index,
            observation=self.observation,
            user_text=step["prompt_no_tips"],
            prompt_ids=step["prompt_ids"],
            prompt_ids_no_tips=step["prompt_ids_no_tips"],
            tips=tips,
            tip_ids=list(step.get("tip_ids") or []),
            tip_similarity=[None] * len(tips),
            tip_score=[None] * len(tips),
            action=step["action"],
            action_ids=step["action_ids"],
            tokens=scores["tokens"],
            replay=scores["replay"],
            greedy_differs=scores["replay"]["differs"],
        )

    def score(self, prompt_ids, no_tip_ids, action_ids, behaviour=None) -> tuple[list[Token], bool]:
        """Per-token views of an action: log-prob with and without tips, top-5 alternatives.
        `behaviour` (the sampler's own log-probs) is shown as the with-tips log-prob when given."""
        if not action_ids:
            return [], False
        pad = self.tokenizer.pad_token_id or 0
        logp, top_ids, top_logp, _ = sequence_alternatives(
            self.model, [prompt_ids, no_tip_ids], [action_ids, action_ids], TOP_K, self.spec.settings.temperature, pad
        )
        return token_views(
            self.tokenizer,
            action_ids,
            logp[0].tolist(),
            logp[1].tolist(),
            top_ids[0].tolist(),
            top_logp[0].tolist(),
            behaviour,
        )

    def _execute(self) -> Turn:
        turn = self.pending.turn
        self.pending = None
        obs, reward, done, info = self.env.step(turn.action)
        self._intrinsic_before.append(copy.deepcopy(self.intrinsic.state_dict()))
        turn.executed, turn.executed_action = True, info.corrected_action or turn.action
        turn.reward, turn.score, turn.next_observation = float(reward), float(info.score), obs
        turn.intrinsic = self._intrinsic_reward(obs, len(turn.tip_ids), turn.index)
        turn.done = bool(done)
        turn.success = bool(info.success)
        recorded_next = turn.replay.get("recordedNextObservation") if turn.replay is not None else None
        if recorded_next is not None:  # a record without it (older runs) cannot say
            turn.replay["observationMatches"] = obs == recorded_next
        self._record_step(turn)
        return turn

    def _intrinsic_reward(self, observation: str, n_tips: int, step: int) -> float:
        """The novelty of the state reached, against the archive loaded from the checkpoint plus
        this episode's earlier states. Training scores an iteration's states jointly, so a
        state other episodes of the same batch also reached pays less there than here."""
        embeddings = self.embedder.encode([observation]) if getattr(self.intrinsic, "needs_embeddings", False) else None
        retrieved = np.array([n_tips]) if self.spec.mode == MEMORY else None
        return float(
            self.intrinsic.rewards(
                self.variation_key, embeddings=embeddings, n_retrieved=retrieved, steps=np.array([step], dtype=np.int64)
            )[0]
        )


def _mismatch(turn: int, recorded: str, replayed: str, what: str) -> dict:
    return {
        "turn": turn,
        "recorded": recorded,
        "replayed": replayed,
        "message": f"The replay left the recording at turn {turn}: {what}, so the environment is not "
        "deterministic in its seed; the policy plays on from the environment's own state.",
    }


def token_views(
    tokenizer, action_ids, logp, logp_no_tips, top_ids, top_logp, behaviour=None
) -> tuple[list[Token], bool]:
    """Token records from scored rows; also whether greedy decoding would differ (a recorded
    token that is not the argmax at its position)."""
    tokens, differs = [], False
    for j, token_id in enumerate(action_ids):
        alternatives = [(int(i), tokenizer.decode([int(i)]), float(lp)) for i, lp in zip(top_ids[j], top_logp[j])]
        differs = differs or alternatives[0][0] != int(token_id)
        tokens.append(
            Token(
                int(token_id),
                tokenizer.decode([int(token_id)]),
                float(behaviour[j]) if behaviour is not None else float(logp[j]),
                float(logp_no_tips[j]),
                alternatives,
            )
        )
    return tokens, differs
