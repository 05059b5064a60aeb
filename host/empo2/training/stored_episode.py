"""What the run folder stores of an episode: the full record and the one-line summary.

The full record carries everything the UI shows and an off-policy rerun needs: each step's
observation, prompt with and without tips (text and token ids), the action's text and token ids,
its behaviour log-probs, extrinsic and intrinsic rewards; the episode's return and its tip.
"""

from __future__ import annotations

from ..policy.prompting import with_tips


def ended_summary(ep, update_mode: str, iteration: int) -> dict:
    """The summary as far as it is known the moment the episode ends, before the iteration's
    novelty rewards and tips: what the trainer reports while the iteration still plays."""
    return {
        "id": ep.id,
        "iteration": iteration,
        "task": ep.task,
        "variation": ep.variation,
        "group": ep.group,
        "rollout_mode": ep.rollout_mode,
        "update_mode": update_mode,
        "return": ep.final_score,
        "success": ep.success,
        "steps": len(ep.steps),
    }


def episode_summary(ep, update_mode: str, iteration: int) -> dict:
    """One line of trajectories/index.jsonl: the ended summary, its novelty reward and its tip."""
    return {
        **ended_summary(ep, update_mode, iteration),
        "intrinsic": sum(s.intrinsic for s in ep.steps),
        "tip_id": ep.tip_id,
    }


def _steps(ep, next_observations: list[str]) -> list[dict]:
    return [
        {
            "t": t,
            "observation": s.observation,
            "prompt": with_tips(s.user_text, s.tips),
            "prompt_no_tips": s.user_text,
            "tips": s.tips,
            "tip_ids": s.tip_ids,
            "tip_texts": s.tip_texts,
            "tip_actions": s.tip_actions,
            "prompt_ids": s.prompt_ids,
            "prompt_ids_no_tips": s.prompt_ids_no_tips,
            "action": s.action,
            "executed_action": s.executed_action,
            "action_ids": s.action_ids,
            "behaviour_logprobs": s.behaviour_logprobs,
            "reward": s.reward,
            "intrinsic": s.intrinsic,
            "score": s.score,
            "next_observation": next_observations[t],
        }
        for t, s in enumerate(ep.steps)
    ]


def ended_record(ep, update_mode: str, iteration: int, next_observations: list[str]) -> dict:
    """The full record as far as it is known the moment the episode ends: its steps as played,
    their novelty rewards still 0 and no tip yet (both come after the rollout). A live run's host
    serves it until the iteration is written."""
    return {
        **ended_summary(ep, update_mode, iteration),
        "description": ep.description,
        "steps": _steps(ep, next_observations),
        "tip": None,
    }


def episode_record(ep, update_mode: str, iteration: int, next_observations: list[str]) -> dict:
    """One line of trajectories/iter-NNNNNN.jsonl: the episode in full, as the iteration ends."""
    return {
        **episode_summary(ep, update_mode, iteration),
        "description": ep.description,
        "steps": _steps(ep, next_observations),
        "tip": ep.tip,
    }
