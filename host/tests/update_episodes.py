"""Hand-made episodes for the update's tests (test_update.py, test_update_scoring.py): each
prompt, tip block and action is known exactly, and they are scored by the real tiny policy."""

from __future__ import annotations

import torch

from empo2.policy.generation import sequence_logprobs
from empo2.policy.prompting import step_messages, step_user_text, with_tips
from empo2.policy.tokenizer import encode_chat, encode_response
from empo2.training.rollout import MEMORY, MEMORY_FREE, Episode, StepRecord
from empo2.training.update import ON_POLICY

TIP = "turn on the lamp first ; action : turn on lamp"
ACTIONS = ("go to kitchen", "turn on lamp", "look around", "pick up seed")
SCENES = ("you are in the hall . a lamp is here .", "you are in the kitchen . a seed is here .")


def make_episodes(tokenizer, update_mode: str, behaviour: float | None = None) -> list[Episode]:
    """Two groups of two episodes, two steps each, as a rollout of `update_mode` records them:
    memory-mode steps carry a tip block, memory-free ones (on-policy) do not. Returns differ
    within each group, so every advantage is non-zero. `behaviour` overrides the sampler's
    recorded log-probs (None: a plausible -1.0 per token)."""
    memory = update_mode != ON_POLICY
    episodes = []
    for e in range(4):
        ep = Episode(
            id=f"i000001-e{e:04d}",
            task="power-device",
            variation=0,
            group=e // 2,
            rollout_mode=MEMORY if memory else MEMORY_FREE,
            description="turn on the lamp",
        )
        for t, scene in enumerate(SCENES):
            user = step_user_text(ep.description, [], scene, history_steps=3, observation_words=10)
            no_tips = encode_chat(tokenizer, step_messages(user))
            prompt = encode_chat(tokenizer, step_messages(with_tips(user, [TIP]))) if memory else no_tips
            action = encode_response(tokenizer, ACTIONS[(e + t) % len(ACTIONS)])
            logp = -1.0 if behaviour is None else behaviour
            ep.steps.append(
                StepRecord(
                    observation=scene,
                    user_text=user,
                    tips=[TIP] if memory else [],
                    tip_ids=[],
                    prompt_ids=prompt,
                    prompt_ids_no_tips=no_tips,
                    action=ACTIONS[0],
                    executed_action=ACTIONS[0],
                    action_ids=action,
                    behaviour_logprobs=[logp] * len(action),
                    reward=float(10 * (e % 2) + t),
                    score=float(10 * (e % 2) + t),
                )
            )
        episodes.append(ep)
    return episodes


def action_logprobs(policy, episodes, with_tips_prompt: bool) -> torch.Tensor:
    """Every action token's log-prob under the policy, with or without the tip block."""
    model, tokenizer = policy
    steps = [s for ep in episodes for s in ep.steps]
    prompts = [s.prompt_ids if with_tips_prompt else s.prompt_ids_no_tips for s in steps]
    with torch.no_grad():
        logp, _, mask = sequence_logprobs(
            model, prompts, [s.action_ids for s in steps], with_entropy=False, pad_id=tokenizer.pad_token_id
        )
    return logp[mask]
