"""The policy: word tokenizer, built-in model, loading, sampling, scoring and imitation.

Tiny model, CPU, whole file well under a minute.
"""

from __future__ import annotations

import copy
import math

import pytest
import torch
import torch.nn.functional as F
from transformers import AutoTokenizer

from empo2.policy.generation import generate, generate_from_ids, sequence_logprobs
from empo2.policy.imitation import imitate
from empo2.policy.model import PolicyLoadError, build_tiny_model, load_policy
from empo2.policy.prompting import (
    REFLECTION_INSTRUCTION,
    SYSTEM_PROMPT,
    step_messages,
    with_tips,
)
from empo2.policy.tokenizer import (
    END,
    UNK,
    build_word_tokenizer,
    encode_chat,
    encode_response,
)

TASKS = {
    "light lamp": "turn on lamp",
    "open door": "open the door",
    "water plant": "pour water on plant",
    "read book": "look at book",
}
FILLER = "you see a table , a chair and a window . the room is quiet".split()
CORPUS = [SYSTEM_PROMPT, REFLECTION_INSTRUCTION, " ".join(FILLER), "history now go north ->"]
CORPUS += [f"task : {task} . {answer}" for task, answer in TASKS.items()]


def toy_prompt(task: str, filler_words: int) -> list[dict]:
    return step_messages(f"task : {task} . now : {' '.join(FILLER[:filler_words])}")


@pytest.fixture(scope="module")
def tokenizer():
    return build_word_tokenizer(CORPUS)


@pytest.fixture(scope="module")
def model(tokenizer):
    return build_tiny_model(tokenizer, "tiny", seed=0)


def prompts_of_mixed_length() -> list[list[dict]]:
    return [toy_prompt("light lamp", 2), toy_prompt("open door", 14), toy_prompt("read book", 7)]


def test_the_tip_block_ends_the_user_turn_with_the_best_tip_last():
    # Retrieval hands tips over best first; the block puts the best one next to the answer.
    assert (
        with_tips("task : light lamp", ["best tip", "second tip"])
        == "task : light lamp <tip> second tip | best tip </tip>"
    )
    assert with_tips("task : light lamp", []) == "task : light lamp"


# --- tokenizer ------------------------------------------------------------------------------


def test_tokenizer_round_trips_through_save_pretrained(tokenizer, tmp_path):
    tokenizer.save_pretrained(tmp_path)
    loaded = AutoTokenizer.from_pretrained(tmp_path)
    messages = step_messages(with_tips("task : light lamp", ["go north"]))
    assert loaded.get_vocab() == tokenizer.get_vocab()
    assert encode_chat(loaded, messages) == encode_chat(tokenizer, messages)
    assert (loaded.eos_token, loaded.pad_token) == (END, "[PAD]")
    ids = encode_response(loaded, "Turn on the Lamp .")
    assert loaded.decode(ids, skip_special_tokens=True) == "turn on the lamp ."


def test_vocabulary_is_deterministic(tokenizer):
    again = build_word_tokenizer(list(reversed(CORPUS)))
    assert again.get_vocab() == tokenizer.get_vocab()


def test_chat_template_renders_like_an_instruct_model(tokenizer):
    messages = [{"role": "system", "content": "be brief ."}, {"role": "user", "content": "hi"}]
    text = tokenizer.apply_chat_template(messages, add_generation_prompt=True, tokenize=False)
    assert text == "<|system|> be brief . <|end|> <|user|> hi <|end|> <|assistant|>"
    prompt = encode_chat(tokenizer, messages)
    answer = encode_response(tokenizer, "turn on lamp")
    whole = encode_chat(tokenizer, [*messages, {"role": "assistant", "content": "turn on lamp"}], False)
    # A sampled answer (words + eos) continues the prompt exactly as the template writes it.
    assert whole == prompt + answer
    assert answer[-1] == tokenizer.eos_token_id


def test_tip_delimiters_are_single_tokens_and_unknown_words_map_to_unk(tokenizer):
    tokens = tokenizer.convert_ids_to_tokens(tokenizer.encode("<tip> go zebra </tip>"))
    assert tokens == ["<tip>", "go", UNK, "</tip>"]
    assert tokenizer.decode(tokenizer.encode("<tip> go </tip>")) == "<tip> go </tip>"


# --- model and loading ----------------------------------------------------------------------


def test_default_size_has_two_million_parameters():
    words = [f"word{i}" for i in range(1500)]  # about the built-in worlds' vocabulary
    default = build_tiny_model(build_word_tokenizer(words), "default")
    count = sum(p.numel() for p in default.parameters())
    print(f"default built-in policy: {count:,} parameters")
    assert 1.5e6 <= count <= 4e6
    assert default.config.tie_word_embeddings


def test_build_is_deterministic_from_the_seed(tokenizer, model):
    same = build_tiny_model(tokenizer, "tiny", seed=0)
    other = build_tiny_model(tokenizer, "tiny", seed=1)
    for a, b in zip(model.parameters(), same.parameters()):
        assert torch.equal(a, b)
    assert any(not torch.equal(a, c) for a, c in zip(model.parameters(), other.parameters()))


def test_load_errors_are_one_sentence(tmp_path):
    for source in [str(tmp_path / "missing"), str(tmp_path)]:
        with pytest.raises(PolicyLoadError) as error:
            load_policy(source)
        message = str(error.value)
        assert source in message and "\n" not in message and "Traceback" not in message
        assert error.value.__cause__ is None


# --- generation -----------------------------------------------------------------------------


def test_batched_greedy_generation_matches_one_at_a_time(model, tokenizer):
    prompts = prompts_of_mixed_length()
    batched = generate(model, tokenizer, prompts, max_new_tokens=6, temperature=0.0)
    for prompt, together in zip(prompts, batched):
        alone = generate(model, tokenizer, [prompt], max_new_tokens=6, temperature=0.0)[0]
        assert together.token_ids == alone.token_ids
        assert together.prompt_ids == encode_chat(tokenizer, prompt)
        assert max(abs(a - b) for a, b in zip(together.logprobs, alone.logprobs)) < 1e-5


def test_micro_batches_change_nothing(model, tokenizer):
    prompts = prompts_of_mixed_length() * 2
    whole = generate(model, tokenizer, prompts, 5, 0.0)
    split = generate(model, tokenizer, prompts, 5, 0.0, max_batch=4)
    assert [g.token_ids for g in whole] == [g.token_ids for g in split]


def test_sampled_logprobs_equal_a_full_recomputation(model, tokenizer):
    generator = torch.Generator().manual_seed(3)
    sampled = generate(model, tokenizer, prompts_of_mixed_length(), 8, 0.7, generator)
    with torch.no_grad():
        logp, entropy, mask = sequence_logprobs(
            model, [g.prompt_ids for g in sampled], [g.token_ids for g in sampled], 0.7
        )
    assert logp.shape == entropy.shape == mask.shape == (3, max(len(g.token_ids) for g in sampled))
    for row, g in enumerate(sampled):
        assert mask[row].sum() == len(g.token_ids)
        assert torch.allclose(logp[row, : len(g.token_ids)], torch.tensor(g.logprobs), atol=1e-4)


def test_sequence_logprobs_match_a_per_token_loop(model, tokenizer):
    """The vectorised, padded scorer against the plainest possible computation."""
    prompts = [encode_chat(tokenizer, p) for p in prompts_of_mixed_length()]
    responses = [encode_response(tokenizer, t) for t in ["turn on lamp", "go", "look at the book"]]
    with torch.no_grad():
        logp, entropy, mask = sequence_logprobs(model, prompts, responses, temperature=2.0)
        for row, (prompt, response) in enumerate(zip(prompts, responses)):
            for t, token in enumerate(response):
                context = torch.tensor([prompt + response[:t]])
                dist = F.log_softmax(model(input_ids=context).logits[0, -1] / 2.0, dim=-1)
                assert math.isclose(logp[row, t].item(), dist[token].item(), abs_tol=1e-4)
                expected_entropy = -(dist.exp() * dist).sum().item()
                assert math.isclose(entropy[row, t].item(), expected_entropy, abs_tol=1e-4)
            assert not mask[row, len(response) :].any() and logp[row, len(response) :].eq(0).all()


def test_generation_is_deterministic_given_the_generator(model, tokenizer):
    def run(seed):
        out = generate(model, tokenizer, prompts_of_mixed_length(), 8, 1.0, torch.Generator().manual_seed(seed))
        return [(g.token_ids, g.logprobs) for g in out]

    assert run(11) == run(11)
    assert run(11) != run(12)


def _own_streams(*seeds: int) -> list[torch.Generator]:
    return [torch.Generator().manual_seed(s) for s in seeds]


def test_a_prompt_with_its_own_generator_samples_the_same_tokens_in_any_batch(model, tokenizer):
    """One generator per prompt (what the trainer gives every episode): a row's tokens do not
    depend on its batch-mates, on the micro-batching, or on how long the others decode; and a
    finished row draws nothing, so its generator is left where its own tokens put it."""
    prompts = prompts_of_mixed_length()
    # A token the first row samples second made an eos: that row stops while the others go on.
    stopper = copy.deepcopy(model)
    stopper.generation_config.eos_token_id = [
        generate(model, tokenizer, prompts[:1], 8, 1.0, _own_streams(5))[0].token_ids[1]
    ]
    together_streams = _own_streams(5, 6, 7)
    together = generate(stopper, tokenizer, prompts, 8, 1.0, together_streams)
    split = generate(stopper, tokenizer, prompts[::-1], 8, 1.0, _own_streams(7, 6, 5), max_batch=2)[::-1]
    assert together[0].finished and len(together[0].token_ids) <= 2
    assert max(len(g.token_ids) for g in together) > 2  # the others decoded on
    for row, (prompt, seed) in enumerate(zip(prompts, (5, 6, 7))):
        alone_stream = _own_streams(seed)
        alone = generate(stopper, tokenizer, [prompt], 8, 1.0, alone_stream)[0]
        for other in (together[row], split[row]):
            assert other.token_ids == alone.token_ids
            assert other.logprobs == pytest.approx(alone.logprobs, abs=1e-5)
        next_draw = torch.rand(1, generator=alone_stream[0])
        assert torch.equal(torch.rand(1, generator=together_streams[row]), next_draw)
    assert [g.token_ids for g in together] != [
        g.token_ids for g in generate(stopper, tokenizer, prompts, 8, 1.0, _own_streams(8, 9, 10))
    ]


def test_per_row_sampling_follows_the_distribution():
    from empo2.policy.generation import _draw_per_row

    probs = torch.tensor([0.1, 0.0, 0.6, 0.3])
    rows = 20_000
    tokens = _draw_per_row(probs.expand(rows, 4), _own_streams(*range(rows)), torch.ones(rows, dtype=torch.bool))
    counts = torch.bincount(tokens, minlength=4).double() / rows
    assert counts[1] == 0  # a token of probability 0 is never drawn
    assert torch.allclose(counts, probs.double(), atol=0.015), counts


def test_eos_stops_a_row_and_the_rest_continue(model, tokenizer):
    prompts = prompts_of_mixed_length()
    free = generate(model, tokenizer, prompts, 6, 0.0)
    # Declare a token of the first row an eos: every row must stop right after its first one.
    stopper = copy.deepcopy(model)
    stop_token = free[0].token_ids[1]
    stopper.generation_config.eos_token_id = [stop_token]
    stopped = generate(stopper, tokenizer, prompts, 6, 0.0)
    assert stopped[0].finished and len(stopped[0].token_ids) <= 2
    for before, after in zip(free, stopped):
        hit = stop_token in before.token_ids
        cut = before.token_ids.index(stop_token) + 1 if hit else 6
        assert after.token_ids == before.token_ids[:cut] and after.finished == hit
        assert after.logprobs == pytest.approx(before.logprobs[:cut], abs=1e-6)
        words = after.token_ids[:-1] if hit else after.token_ids
        assert after.text == tokenizer.decode(words, skip_special_tokens=True)


# --- learning -------------------------------------------------------------------------------


def test_gradients_reach_every_parameter(tokenizer):
    learner = build_tiny_model(tokenizer, "tiny", seed=2)
    learner.train()
    prompts = [encode_chat(tokenizer, p) for p in prompts_of_mixed_length()]
    responses = [encode_response(tokenizer, "open the door"), encode_response(tokenizer, "go"), []]
    logp, entropy, mask = sequence_logprobs(learner, prompts, responses)
    loss = -(logp.sum() + 0.01 * entropy.sum()) / mask.sum()
    loss.backward()
    assert torch.isfinite(loss)
    for name, parameter in learner.named_parameters():
        assert parameter.grad is not None and parameter.grad.abs().sum() > 0, name


def test_the_imitation_rate_warms_up_then_decays_to_zero_on_a_cosine():
    from empo2.policy.imitation import _warmup_cosine, steps_per_epoch

    factors = [_warmup_cosine(step, 10, 110) for step in range(110)]
    assert factors[:10] == pytest.approx([(s + 1) / 10 for s in range(10)])
    assert factors[10] == pytest.approx(1.0)
    assert factors[60] == pytest.approx(0.5)  # halfway through the decay
    assert factors[-1] == pytest.approx(0.5 * (1 + math.cos(math.pi * 99 / 100)))
    assert all(a >= b for a, b in zip(factors[10:], factors[11:]))
    assert _warmup_cosine(500, 0, 110) == 1.0  # no warmup: a constant rate
    assert steps_per_epoch(200, 16) == math.ceil(200 / 16)


def test_imitation_learns_the_answers_and_survives_a_reload(tokenizer, tmp_path):
    learner = build_tiny_model(tokenizer, "tiny", seed=0)
    tasks = list(TASKS.items())
    examples = [(toy_prompt(tasks[i % 4][0], i % len(FILLER)), tasks[i % 4][1]) for i in range(200)]
    seen = []
    losses = imitate(
        learner, tokenizer, examples, epochs=5, batch_size=16, lr=3e-3, seed=0, progress=lambda *args: seen.append(args)
    )
    assert len(losses) == 5 and all(math.isfinite(x) for x in losses)
    assert losses[-1] < 0.25 * losses[0]
    assert len(seen) == 5 * math.ceil(200 / 16)

    prompts = [toy_prompt(task, 5) for task in TASKS]
    answers = generate(learner, tokenizer, prompts, max_new_tokens=10, temperature=0.0)
    assert [a.text for a in answers] == list(TASKS.values())
    assert all(a.finished and a.token_ids[-1] == tokenizer.eos_token_id for a in answers)

    learner.save_pretrained(tmp_path)
    tokenizer.save_pretrained(tmp_path)
    reloaded, reloaded_tokenizer = load_policy(str(tmp_path), dtype="float32")
    ids = torch.tensor([encode_chat(reloaded_tokenizer, prompts[0])])
    with torch.no_grad():
        assert torch.equal(learner(input_ids=ids).logits, reloaded(input_ids=ids).logits)
    prompt_ids = [a.prompt_ids for a in answers]
    again = generate_from_ids(reloaded, reloaded_tokenizer, prompt_ids, 10, 0.0)
    assert [a.token_ids for a in again] == [a.token_ids for a in answers]


def test_gradient_checkpointing_keeps_the_cache_for_sampling(model, tokenizer, tmp_path):
    model.save_pretrained(tmp_path)
    tokenizer.save_pretrained(tmp_path)
    checkpointed, _ = load_policy(str(tmp_path), gradient_checkpointing=True)
    checkpointed.train()
    reference = generate(model, tokenizer, prompts_of_mixed_length(), 5, 0.0)
    sampled = generate(checkpointed, tokenizer, prompts_of_mixed_length(), 5, 0.0)
    assert [g.token_ids for g in sampled] == [g.token_ids for g in reference]
    assert checkpointed.training  # the caller's mode is restored
    logp, _, mask = sequence_logprobs(checkpointed, [g.prompt_ids for g in sampled], [g.token_ids for g in sampled])
    (-logp.sum() / mask.sum()).backward()
    assert all(p.grad is not None for p in checkpointed.parameters())


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_sampling_on_gpu_matches_recomputation(model, tokenizer):
    on_gpu = copy.deepcopy(model).to("cuda")
    generator = torch.Generator("cuda").manual_seed(0)
    sampled = generate(on_gpu, tokenizer, prompts_of_mixed_length(), 8, 1.0, generator)
    with torch.no_grad():
        logp, _, _ = sequence_logprobs(on_gpu, [g.prompt_ids for g in sampled], [g.token_ids for g in sampled])
    for row, g in enumerate(sampled):
        recomputed = logp[row, : len(g.token_ids)].cpu()
        assert torch.allclose(recomputed, torch.tensor(g.logprobs), atol=1e-3)
