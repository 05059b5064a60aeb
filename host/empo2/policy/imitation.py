"""Warm start by imitation: teach a fresh policy to answer like the demonstrations.

Cross-entropy on the assistant's tokens only (the closing eos included, so the model learns to
stop), computed through `sequence_logprobs`, the same scoring the RL update uses, so whatever the
warm start learns is exactly what the update later sees.

The learning rate warms up linearly, then decays to zero on a cosine. Measured on the built-in
recipe: at a constant 2e-3 every attention head of the fresh model settles on one fixed token
(":", "agent", "<|end|>") and content-based copying never forms, not even after 2,500 steps, so
the policy cannot read an action out of a tip; warmed up to 1e-3 and decayed, the same model
copies it (mean log-prob of a tip-success action -0.8 after 1,600 steps, against -2.8).

Batches are bucketed by length (shuffle, then sort within pools of many batches, then shuffle
the batches) so short prompts are not padded to the longest one of the whole set; the order is a
pure function of the seed.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Mapping, Sequence

import torch
from transformers import PreTrainedModel, PreTrainedTokenizerBase

from .generation import sequence_logprobs
from .tokenizer import encode_chat, encode_response

# progress(epoch, step, steps_per_epoch, loss): called after every optimiser step.
Progress = Callable[[int, int, int, float], None]

_POOL_BATCHES = 32  # batches per sorting pool: large enough to pad little, small enough to mix
_MAX_GRAD_NORM = 1.0  # a fresh tiny model sees large early gradients; clipping keeps it stable


def _length_batches(lengths: Sequence[int], batch_size: int, rng: random.Random) -> list[list[int]]:
    """Indices grouped into batches of similar length, in a seeded random order."""
    order = list(range(len(lengths)))
    rng.shuffle(order)
    batches: list[list[int]] = []
    pool_size = batch_size * _POOL_BATCHES
    for start in range(0, len(order), pool_size):
        pool = sorted(order[start : start + pool_size], key=lambda i: lengths[i])
        batches.extend(pool[i : i + batch_size] for i in range(0, len(pool), batch_size))
    rng.shuffle(batches)
    return batches


def steps_per_epoch(examples: int, batch_size: int) -> int:
    """Optimizer steps in one epoch of `examples` (batches never straddle a sorting pool)."""
    pool = batch_size * _POOL_BATCHES
    return sum(math.ceil(min(pool, examples - start) / batch_size) for start in range(0, examples, pool))


def imitate(
    model: PreTrainedModel,
    tokenizer: PreTrainedTokenizerBase,
    examples: Sequence[tuple[Sequence[Mapping[str, str]], str]],
    epochs: int = 1,
    batch_size: int = 32,
    lr: float = 1e-3,
    seed: int = 0,
    progress: Progress | None = None,
    warmup_steps: int = 0,
) -> list[float]:
    """Fit the model to (chat messages, assistant text) pairs; returns each epoch's mean loss
    per target token. With warmup_steps > 0 the rate warms up linearly over that many steps and
    then follows a cosine down to zero at the last step; 0 keeps it constant. The model is left
    in the train/eval mode it came in."""
    prompts = [encode_chat(tokenizer, messages) for messages, _ in examples]
    targets = [encode_response(tokenizer, text) for _, text in examples]
    lengths = [len(p) + len(t) for p, t in zip(prompts, targets)]
    pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0
    params = [p for p in model.parameters() if p.requires_grad]
    optimizer = torch.optim.AdamW(params, lr=lr)
    rng = random.Random(seed)
    total_steps = epochs * steps_per_epoch(len(examples), batch_size)
    scheduler = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda step: _warmup_cosine(step, warmup_steps, total_steps)
    )
    was_training = model.training
    model.train()
    epoch_losses: list[float] = []
    try:
        for epoch in range(epochs):
            batches = _length_batches(lengths, batch_size, rng)
            total, count = 0.0, 0
            for step, batch in enumerate(batches):
                logp, _, mask = sequence_logprobs(
                    model,
                    [prompts[i] for i in batch],
                    [targets[i] for i in batch],
                    with_entropy=False,
                    pad_id=pad_id,
                )
                tokens = int(mask.sum())
                loss = -logp.sum() / tokens
                optimizer.zero_grad(set_to_none=True)
                loss.backward()
                torch.nn.utils.clip_grad_norm_(params, _MAX_GRAD_NORM)
                optimizer.step()
                scheduler.step()
                total += loss.item() * tokens
                count += tokens
                if progress is not None:
                    progress(epoch, step, len(batches), loss.item())
            epoch_losses.append(total / max(count, 1))
    finally:
        model.train(was_training)
    return epoch_losses


def _warmup_cosine(step: int, warmup_steps: int, total_steps: int) -> float:
    """The learning-rate factor of optimizer step `step` (0-based)."""
    if warmup_steps <= 0:
        return 1.0
    if step < warmup_steps:
        return (step + 1) / warmup_steps
    progress = (step - warmup_steps) / max(1, total_steps - warmup_steps)
    return 0.5 * (1.0 + math.cos(math.pi * min(1.0, progress)))
