"""Token ids for every caller, and the word-level tokenizer of the built-in policy.

`encode_chat` / `encode_response` are the only ways the host turns text into ids, so rollout,
update, re-scoring and imitation always agree on where a prompt ends and an action begins: an
action is its words followed by eos, exactly the tokens the sampler produced.

The built-in tokenizer is deliberately tiny: one token per lower-cased word or punctuation run,
so the demonstrations' vocabulary (a few thousand words) is the whole vocabulary and a model of a
few million parameters can learn the text worlds. It carries a chat template that renders the same
conversation shape as a real instruct model's, so no caller special-cases it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from tokenizers import AddedToken, Tokenizer, models, normalizers, pre_tokenizers
from transformers import PreTrainedTokenizerBase, PreTrainedTokenizerFast

from .prompting import TIP_CLOSE, TIP_OPEN

PAD, UNK = "[PAD]", "[UNK]"
SYSTEM, USER, ASSISTANT, END = "<|system|>", "<|user|>", "<|assistant|>", "<|end|>"
SPECIAL_TOKENS = (PAD, UNK, SYSTEM, USER, ASSISTANT, END)
# Not "special": decoding a prompt must keep the tip block visible.
TIP_TOKENS = (TIP_OPEN, TIP_CLOSE)

# Same shape as an instruct model's template: every turn is "<|role|> text <|end|>", and the
# generation prompt is the bare assistant tag, so a sampled answer ends with <|end|> (= eos).
CHAT_TEMPLATE = (
    "{% for message in messages %}"
    "{% if message['role'] not in ['system', 'user', 'assistant'] %}"
    "{{ raise_exception('unknown chat role: ' + message['role']) }}"
    "{% endif %}"
    "<|{{ message['role'] }}|> {{ message['content'] }} <|end|> "
    "{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>{% endif %}"
)


def _word_splitter() -> Tokenizer:
    """A WordLevel tokenizer without vocabulary: only its normaliser and pre-tokenizer matter."""
    tok = Tokenizer(models.WordLevel({UNK: 0}, unk_token=UNK))
    tok.normalizer = normalizers.Lowercase()
    # Whitespace splits on \w+|[^\w\s]+ : words and punctuation runs ("->") are separate tokens.
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    return tok


def corpus_words(corpus: Iterable[str]) -> list[str]:
    """Sorted distinct words of `corpus` exactly as the tokenizer will split them."""
    splitter = _word_splitter()
    words: set[str] = set()
    for text in corpus:
        normal = splitter.normalizer.normalize_str(text)
        words.update(piece for piece, _ in splitter.pre_tokenizer.pre_tokenize_str(normal))
    return sorted(words)


def build_word_tokenizer(corpus: Iterable[str], extra_words: Iterable[str] = ()) -> PreTrainedTokenizerFast:
    """Word-level tokenizer whose vocabulary is every word of `corpus` (and of `extra_words`).

    Ids: the six special tokens first, then <tip>, </tip>, then the words sorted, so the same
    corpus always gives the same ids.
    """
    reserved = SPECIAL_TOKENS + TIP_TOKENS
    words = [w for w in corpus_words([*corpus, *extra_words]) if w not in reserved]
    vocab = {token: i for i, token in enumerate([*reserved, *words])}

    backend = _word_splitter()
    backend.model = models.WordLevel(vocab, unk_token=UNK)
    # Added tokens are matched before normalising and splitting, so "[PAD]" or "</tip>" stay
    # whole instead of becoming "[", "pad", "]".
    backend.add_special_tokens([AddedToken(t, special=True, normalized=False) for t in SPECIAL_TOKENS])
    backend.add_tokens([AddedToken(t, special=False, normalized=False) for t in TIP_TOKENS])
    # No decoder: the tokenizers library then joins tokens with single spaces.

    return PreTrainedTokenizerFast(
        tokenizer_object=backend,
        pad_token=PAD,
        unk_token=UNK,
        eos_token=END,
        bos_token=None,
        chat_template=CHAT_TEMPLATE,
        # transformers' clean-up would glue " ." to the previous word; our text keeps the spaces.
        clean_up_tokenization_spaces=False,
        model_max_length=1024,
        padding_side="left",
    )


def _as_id_list(encoded) -> list[int]:
    """apply_chat_template returns a list, a nested list or a BatchEncoding depending on the
    transformers version and arguments; callers always get a flat list[int]."""
    if isinstance(encoded, Mapping) or hasattr(encoded, "input_ids"):
        encoded = encoded["input_ids"]
    if hasattr(encoded, "tolist"):
        encoded = encoded.tolist()
    if encoded and isinstance(encoded[0], (list, tuple)):
        if len(encoded) != 1:
            raise ValueError("expected the ids of one conversation")
        encoded = encoded[0]
    return [int(i) for i in encoded]


def encode_chat(
    tokenizer: PreTrainedTokenizerBase,
    messages: Sequence[Mapping[str, str]],
    add_generation_prompt: bool = True,
) -> list[int]:
    """Prompt ids of a conversation through the model's own chat template."""
    encoded = tokenizer.apply_chat_template(list(messages), add_generation_prompt=add_generation_prompt, tokenize=True)
    return _as_id_list(encoded)


def encode_response(tokenizer: PreTrainedTokenizerBase, text: str) -> list[int]:
    """An action's ids as the sampler would have produced them: its tokens, then eos."""
    ids = tokenizer.encode(text, add_special_tokens=False)
    return [int(i) for i in ids] + [int(tokenizer.eos_token_id)]
