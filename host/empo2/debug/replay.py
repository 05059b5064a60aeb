"""Teacher-forced replay of a recorded episode: its actions re-scored by a chosen policy.

Every recorded step is scored in one forward pass per prompt (with tips, without), the same
`sequence_alternatives` the live debugger uses. What comes out, per turn:
- each token's log-prob with and without tips and its top-5, next to the recorded behaviour
  log-prob (`maxLogprobError`: how far the chosen policy is from the one that acted; with the
  checkpoint that produced the episode this is float noise, tested to 1e-4);
- `differs`: greedy decoding of the chosen policy would not produce the recorded action (a
  recorded token is not the most likely one given the recorded prefix); the first such turn is
  the session's `firstDifferentTurn`;
- for a training episode, what its update did with it: the episode's GRPO advantage (from its
  iteration's group, training/update.py's own return and advantage functions), each token's importance
  ratio under the update mode's prompts (paper Table 3: numerator without tips for off-policy)
  over the recorded behaviour log-prob, and whether low-probability masking drops it.

The ratio's denominator is the behaviour log-prob: the update's π_old is recomputed before its
first optimizer step from the same weights, so the two agree to float noise. With
`algo.off_policy_old_logprob = without_tips` the update's denominator has no tips instead; the
record holds no such number, so that variant shows the behaviour one (documented in
docs/debugging.md).
"""

from __future__ import annotations

import torch

from ..algo.losses import group_advantages, low_probability_mask
from ..config import TrainConfig
from ..modes import MEMORY_FREE, OFF_POLICY
from ..policy.generation import sequence_alternatives
from ..training.rollout import Episode, StepRecord
from ..training.update import episode_returns
from .session import TOP_K, token_views

SCORING_BATCH = 16


def episode_from_record(record: dict) -> Episode:
    """The rollout's Episode back from its run-folder record (training/stored_episode.py writes it)."""
    ep = Episode(
        id=record["id"],
        task=record["task"],
        variation=record["variation"],
        group=record.get("group", 0),
        rollout_mode=record.get("rollout_mode", MEMORY_FREE),
        description=record.get("description", ""),
        final_score=record.get("return", 0.0),
        success=bool(record.get("success")),
        tip=record.get("tip", ""),
        done=True,
    )
    for s in record.get("steps", []):
        ep.steps.append(
            StepRecord(
                observation=s["observation"],
                user_text=s["prompt_no_tips"],
                tips=s.get("tips") or [],
                tip_ids=s.get("tip_ids") or [],
                prompt_ids=s["prompt_ids"],
                prompt_ids_no_tips=s["prompt_ids_no_tips"],
                action=s["action"],
                executed_action=s["executed_action"],
                action_ids=s["action_ids"],
                behaviour_logprobs=s["behaviour_logprobs"],
                reward=s.get("reward", 0.0),
                intrinsic=s.get("intrinsic", 0.0),
                score=s.get("score", 0.0),
            )
        )
    return ep


def training_advantage(record: dict, iteration_records: list[dict], config: TrainConfig) -> float | None:
    """The GRPO advantage the update gave this episode (None when it is not among them)."""
    episodes = [episode_from_record(r) for r in iteration_records]
    ids = [ep.id for ep in episodes]
    if record["id"] not in ids:
        return None
    returns = episode_returns(episodes, config.algo)
    groups = torch.tensor([ep.group for ep in episodes], dtype=torch.long)
    advantages = group_advantages(returns, groups, normalize_std=config.algo.advantage_std_norm)
    return float(advantages[ids.index(record["id"])])


def score_recording(
    model, tokenizer, record: dict, temperature: float, config: TrainConfig | None, advantage: float | None
) -> tuple[list[dict], dict]:
    """(per-turn scores for DebugSession, the replay summary)."""
    steps = record.get("steps", [])
    rows_prompt, rows_action = [], []
    for s in steps:
        rows_prompt += [s["prompt_ids"], s["prompt_ids_no_tips"]]
        rows_action += [s["action_ids"], s["action_ids"]]
    pad = tokenizer.pad_token_id or 0
    scored = []
    for start in range(0, len(rows_prompt), SCORING_BATCH):
        # Empty actions (none in practice) are scored as one pad token and then ignored.
        actions = [a or [pad] for a in rows_action[start : start + SCORING_BATCH]]
        logp, top_ids, top_logp, _ = sequence_alternatives(
            model, rows_prompt[start : start + SCORING_BATCH], actions, TOP_K, temperature, pad
        )
        for r in range(logp.shape[0]):
            scored.append((logp[r].tolist(), top_ids[r].tolist(), top_logp[r].tolist()))
    update_mode = record.get("update_mode")
    algo = config.algo if config is not None else None
    per_turn, first_different, worst = [], None, 0.0
    for t, s in enumerate(steps):
        n = len(s["action_ids"])
        (with_lp, with_ids, with_top), (without_lp, _, _) = scored[2 * t], scored[2 * t + 1]
        tokens, differs = token_views(
            tokenizer, s["action_ids"], with_lp[:n], without_lp[:n], with_ids[:n], with_top[:n]
        )
        behaviour = list(s.get("behaviour_logprobs") or [])[:n]
        errors = [abs(tok.logprob - b) for tok, b in zip(tokens, behaviour)]
        error = max(errors, default=0.0)
        worst = max(worst, error)
        first_token = next((j for j, tok in enumerate(tokens) if tok.alternatives[0][0] != tok.id), None)
        if differs and first_different is None:
            first_different = t
        if algo is not None and update_mode and behaviour and len(behaviour) == n:
            _update_view(tokens, behaviour, update_mode, algo)
        per_turn.append(
            {
                "tokens": tokens,
                "replay": {
                    "recordedAction": s["action"],
                    "recordedExecutedAction": s["executed_action"],
                    "recordedLogprobs": behaviour,
                    "maxLogprobError": error,
                    "differs": differs,
                    "firstDifferentToken": first_token,
                    "preferredToken": tokens[first_token].alternatives[0][1] if first_token is not None else None,
                    "recordedReward": s.get("reward"),
                    "recordedScore": s.get("score"),
                    "recordedIntrinsic": s.get("intrinsic"),
                    "recordedNextObservation": s.get("next_observation"),
                    "observationMatches": None,
                    "advantage": advantage,
                    "updateMode": update_mode,
                },
            }
        )
    summary = {
        "turns": len(steps),
        "firstDifferentTurn": first_different,
        "maxLogprobError": worst,
        "updateMode": update_mode,
        "iteration": record.get("iteration"),
        "advantage": advantage,
    }
    return per_turn, summary


def _update_view(tokens, behaviour: list[float], update_mode: str, algo) -> None:
    """Each token's importance ratio and mask as the update of `update_mode` would see them."""
    numerator = torch.tensor([t.logprob_no_tips if update_mode == OFF_POLICY else t.logprob for t in tokens])
    old = torch.tensor(behaviour)
    ratio = torch.exp(numerator - old)
    tested = old if algo.mask_logprob == "behaviour" else torch.tensor([t.logprob_no_tips for t in tokens])
    keep = low_probability_mask(
        tested[None], torch.ones(1, len(tokens), dtype=torch.bool), algo.mask_log_delta, level=algo.low_prob_mask
    )[0]
    for tok, r, k in zip(tokens, ratio.tolist(), keep.tolist()):
        tok.ratio, tok.masked = float(r), not bool(k)
