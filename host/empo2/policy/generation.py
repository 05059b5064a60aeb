"""Sampling actions and scoring them: the two places the policy's log-probabilities come from.

Our own decoding loop instead of `model.generate`, so the behaviour log-probs recorded at rollout
are exactly log_softmax(logits / temperature) of the sampled token, the quantity the PPO ratio
divides by, and `sequence_logprobs` recomputes the same number (tested to 1e-4 in float32).

Both use one layout: prompts left-padded so they all end in the same column, responses after
them (right-padded when scoring). Position ids count real tokens only, so a row's numbers do not
depend on how much padding its batch-mates forced on it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from transformers import PreTrainedModel, PreTrainedTokenizerBase

from .model import compute_dtype
from .tokenizer import encode_chat

Sampler = torch.Generator | Sequence[torch.Generator] | None
"""Where sampled tokens come from: one generator for the whole batch, or one per prompt (row i
draws only from generator i, and only while it is unfinished, so a row's tokens do not depend on
its batch-mates: the trainer gives every episode its own, `rollout.episode_generator`)."""


@dataclass
class Generation:
    """One sampled action. token_ids ends with eos when finished (eos is part of the action and
    gets gradient); text is the decoded action without it."""

    text: str
    token_ids: list[int]
    logprobs: list[float]
    prompt_ids: list[int]
    finished: bool


def stop_token_ids(model: PreTrainedModel, tokenizer: PreTrainedTokenizerBase) -> set[int]:
    """The tokenizer's eos plus the model's generation eos ids (Qwen-Instruct lists two)."""
    ids = {int(tokenizer.eos_token_id)}
    configured = getattr(getattr(model, "generation_config", None), "eos_token_id", None)
    if isinstance(configured, int):
        ids.add(configured)
    elif configured:
        ids.update(int(i) for i in configured)
    return ids


def compute_precision(model: PreTrainedModel):
    """bf16 autocast for a mixed-precision policy (fp32 weights), else nothing. Backward runs
    outside it, as autocast wants: each op's gradient comes back in its forward dtype."""
    dtype = compute_dtype(model)
    if dtype is None:
        return nullcontext()
    return torch.autocast(device_type=model.device.type, dtype=dtype)


def pad_layout(
    prompts: Sequence[Sequence[int]],
    responses: Sequence[Sequence[int]],
    pad_id: int,
    device: torch.device | str,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Left-padded prompts followed by right-padded responses.

    Returns input_ids (B, P+T), attention_mask (B, P+T) and position_ids (B, P+T), where P is the
    longest prompt and T the longest response; column P is every row's first response token.
    """
    width_p = max(len(p) for p in prompts)
    width_t = max((len(r) for r in responses), default=0)
    ids = torch.full((len(prompts), width_p + width_t), pad_id, dtype=torch.long)
    mask = torch.zeros_like(ids)
    for row, (prompt, response) in enumerate(zip(prompts, responses)):
        start = width_p - len(prompt)
        ids[row, start : width_p + len(response)] = torch.tensor([*prompt, *response])
        mask[row, start : width_p + len(response)] = 1
    # Pads get position 0; they are masked out, so any value works.
    positions = (mask.cumsum(-1) - 1).clamp(min=0)
    return ids.to(device), mask.to(device), positions.to(device)


@contextmanager
def _decoding(model: PreTrainedModel) -> Iterator[None]:
    """No grad, eval mode (gradient checkpointing silently turns the KV cache off in train
    mode), and the caller's mode restored afterwards."""
    was_training = model.training
    model.eval()
    try:
        with torch.no_grad():
            yield
    finally:
        model.train(was_training)


def _pick(
    logits: torch.Tensor, temperature: float, generator: Sampler, alive: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    """Next token and its log-prob from logits (B, V) float32; temperature 0 is greedy with
    temperature-1 log-probs. `alive` (B,) marks the rows still decoding."""
    logp = F.log_softmax(logits / (temperature if temperature > 0 else 1.0), dim=-1)
    if temperature <= 0:
        token = logits.argmax(dim=-1)
    elif isinstance(generator, torch.Generator) or generator is None:
        probs = logp.exp()
        # The generator decides the device of the draw; sample there so any generator works.
        where = generator.device if generator is not None else probs.device
        token = torch.multinomial(probs.to(where), 1, generator=generator).to(probs.device)
        token = token.squeeze(-1)
    else:
        token = _draw_per_row(logp.exp(), generator, alive)
    return token, logp.gather(-1, token[:, None]).squeeze(-1)


def _draw_per_row(probs: torch.Tensor, generators: Sequence[torch.Generator], alive: torch.Tensor) -> torch.Tensor:
    """Inverse-CDF sampling with one uniform per live row from that row's own generator (a
    finished row draws nothing, so a generator advances by its own row's tokens only)."""
    uniforms = [
        torch.rand(1, generator=g, dtype=torch.float64, device=g.device).item() if live else 0.0
        for g, live in zip(generators, alive.tolist())
    ]
    u = torch.tensor(uniforms, dtype=torch.float64, device=probs.device)
    cdf = probs.double().cumsum(-1)  # row by row: no row's sums depend on another's
    token = torch.searchsorted(cdf, (u * cdf[:, -1])[:, None], right=True).squeeze(-1)
    return token.clamp(max=probs.shape[-1] - 1)


def _generate_batch(
    model: PreTrainedModel,
    prompt_ids: Sequence[Sequence[int]],
    max_new_tokens: int,
    temperature: float,
    generator: Sampler,
    stop_ids: set[int],
    pad_id: int,
    on_token: Callable[[int], None] | None = None,
) -> list[tuple[list[int], list[float], bool]]:
    """(token_ids, logprobs, finished) per prompt; one prefill, then one cached step per token.
    on_token(finished): after each token, the number of rows that have written their stop token."""
    ids, mask, positions = pad_layout(prompt_ids, [[] for _ in prompt_ids], pad_id, model.device)
    with compute_precision(model):
        out = model(input_ids=ids, attention_mask=mask, position_ids=positions, use_cache=True, logits_to_keep=1)
    next_position = positions[:, -1] + 1
    stop = torch.tensor(sorted(stop_ids), device=model.device)
    done = torch.zeros(len(prompt_ids), dtype=torch.bool, device=model.device)
    steps: list[tuple[torch.Tensor, torch.Tensor, torch.Tensor]] = []  # (token, logp, alive)
    for step in range(max_new_tokens):
        token, logp = _pick(out.logits[:, -1].float(), temperature, generator, ~done)
        steps.append((token, logp, ~done))
        done = done | torch.isin(token, stop)
        finished = int(done.sum())  # one device sync per token serves both the report and the stop
        if on_token is not None:
            on_token(finished)
        if step == max_new_tokens - 1 or finished == len(prompt_ids):
            break
        # Finished rows keep decoding (cheaper than reshaping the cache); their tokens are
        # dropped because `alive` is False for them from the next step on.
        mask = torch.cat([mask, torch.ones_like(mask[:, :1])], dim=-1)
        with compute_precision(model):
            out = model(
                input_ids=token[:, None],
                attention_mask=mask,
                position_ids=next_position[:, None],
                past_key_values=out.past_key_values,
                use_cache=True,
            )
        next_position = next_position + 1
    if not steps:
        return [([], [], False) for _ in prompt_ids]
    tokens = torch.stack([s[0] for s in steps], dim=1).tolist()  # (B, steps)
    logps = torch.stack([s[1] for s in steps], dim=1).tolist()
    alive = torch.stack([s[2] for s in steps], dim=1).tolist()
    finished = done.tolist()
    results = []
    for row in range(len(prompt_ids)):
        keep = sum(alive[row])
        results.append((tokens[row][:keep], logps[row][:keep], finished[row]))
    return results


def generate_from_ids(
    model: PreTrainedModel,
    tokenizer: PreTrainedTokenizerBase,
    prompt_ids: Sequence[Sequence[int]],
    max_new_tokens: int,
    temperature: float = 1.0,
    generator: Sampler = None,
    max_batch: int = 64,
    on_finished: Callable[[int], None] | None = None,
) -> list[Generation]:
    """`generate` for prompts already turned into ids (e.g. with and without tips); `generator`
    one for all prompts or one per prompt (Sampler). on_finished(n): the number of prompts whose
    answer is complete so far (a stop token, or the token limit at the end of its batch),
    reported after every token."""
    stop_ids = stop_token_ids(model, tokenizer)
    pad_id = tokenizer.pad_token_id
    if pad_id is None:
        pad_id = tokenizer.eos_token_id
    results: list[Generation] = []
    with _decoding(model):
        for start in range(0, len(prompt_ids), max_batch):
            chunk = [list(p) for p in prompt_ids[start : start + max_batch]]
            draws = generator
            if not (isinstance(generator, torch.Generator) or generator is None):
                draws = list(generator[start : start + max_batch])
            sampled = _generate_batch(
                model,
                chunk,
                max_new_tokens,
                temperature,
                draws,
                stop_ids,
                pad_id,
                None if on_finished is None else (lambda finished, before=start: on_finished(before + finished)),
            )
            if on_finished is not None:
                on_finished(start + len(chunk))
            for prompt, (tokens, logps, finished) in zip(chunk, sampled):
                text_ids = tokens[:-1] if finished else tokens
                text = tokenizer.decode(text_ids, skip_special_tokens=True).strip()
                results.append(Generation(text, tokens, logps, prompt, finished))
    return results


def generate(
    model: PreTrainedModel,
    tokenizer: PreTrainedTokenizerBase,
    prompts: Sequence[Sequence[Mapping[str, str]]],
    max_new_tokens: int,
    temperature: float = 1.0,
    generator: Sampler = None,
    max_batch: int = 64,
) -> list[Generation]:
    """Sample one assistant answer per chat prompt, stopping at eos or after max_new_tokens.

    Deterministic for a given generator state (on CPU). Large batches run in micro-batches of
    max_batch prompts, one after another, drawing from the same generator.
    """
    prompt_ids = [encode_chat(tokenizer, messages) for messages in prompts]
    return generate_from_ids(model, tokenizer, prompt_ids, max_new_tokens, temperature, generator, max_batch)


def _response_log_softmax(
    model: PreTrainedModel,
    prompt_ids: Sequence[Sequence[int]],
    response_ids: Sequence[Sequence[int]],
    temperature: float,
    pad_id: int,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """One forward pass over prompt + response: (log-softmax (B, T, V), targets (B, T), mask (B, T)).

    The one place response distributions are computed, for the loss and for the debugger alike.
    """
    ids, mask, positions = pad_layout(prompt_ids, response_ids, pad_id, model.device)
    width_t = max((len(r) for r in response_ids), default=0)
    # Only the logits that predict response tokens: the last T+1 columns minus the final one.
    # This keeps a 150k-word vocabulary from materialising logits for thousands of prompt tokens.
    with compute_precision(model):
        out = model(
            input_ids=ids,
            attention_mask=mask,
            position_ids=positions,
            use_cache=False,
            logits_to_keep=width_t + 1,
        )
    logits = out.logits[:, :-1].float()
    if temperature > 0:
        logits = logits / temperature
    logp_all = F.log_softmax(logits, dim=-1)  # (B, T, V)
    targets = ids[:, ids.shape[1] - width_t :]
    response_mask = mask[:, ids.shape[1] - width_t :].bool()
    return logp_all, targets, response_mask


def sequence_logprobs(
    model: PreTrainedModel,
    prompt_ids: Sequence[Sequence[int]],
    response_ids: Sequence[Sequence[int]],
    temperature: float = 1.0,
    with_entropy: bool = True,
    pad_id: int = 0,
) -> tuple[torch.Tensor, torch.Tensor | None, torch.Tensor]:
    """Log-probs of each response token given its prompt, in one forward pass.

    Returns logp (B, T), entropy (B, T) or None when with_entropy is False, and response_mask
    (B, T) bool, with T the longest response; padded positions hold 0. Differentiable: call it
    under torch.no_grad() for old/reference log-probs. pad_id only fills masked slots.
    """
    logp_all, targets, response_mask = _response_log_softmax(model, prompt_ids, response_ids, temperature, pad_id)
    logp = logp_all.gather(-1, targets[..., None]).squeeze(-1).masked_fill(~response_mask, 0.0)
    entropy = None
    if with_entropy:
        entropy = -(logp_all.exp() * logp_all).sum(-1).masked_fill(~response_mask, 0.0)
    return logp, entropy, response_mask


def sequence_alternatives(
    model: PreTrainedModel,
    prompt_ids: Sequence[Sequence[int]],
    response_ids: Sequence[Sequence[int]],
    k: int = 5,
    temperature: float = 1.0,
    pad_id: int = 0,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """What a reader of one episode wants per token (no grad): logp (B, T) of the response
    tokens, the k most likely tokens at each position (ids (B, T, k), log-probs (B, T, k),
    best first) and response_mask (B, T). The top-1 id is what greedy decoding would pick."""
    with torch.no_grad(), _decoding(model):
        logp_all, targets, response_mask = _response_log_softmax(model, prompt_ids, response_ids, temperature, pad_id)
        logp = logp_all.gather(-1, targets[..., None]).squeeze(-1).masked_fill(~response_mask, 0.0)
        top_logp, top_ids = logp_all.topk(min(k, logp_all.shape[-1]), dim=-1)
    return logp, top_ids, top_logp, response_mask
