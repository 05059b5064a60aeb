"""Building the built-in policy and loading any causal LM as the policy.

The built-in model is a Qwen2ForCausalLM: the same architecture class as the real target
(Qwen2.5-7B-Instruct), so the tiny CPU runs exercise the very code paths (q/k/v biases, grouped
key/value heads, RoPE, its cache and masks) that a GPU run uses; only the sizes differ.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

import torch
from transformers.utils import logging as hf_logging
from transformers import (
    AutoModelForCausalLM,
    AutoTokenizer,
    PreTrainedModel,
    PreTrainedTokenizerBase,
    Qwen2Config,
    Qwen2ForCausalLM,
)


# Loading and saving bars of transformers would interleave with our own on stderr.
hf_logging.disable_progress_bar()


class PolicyLoadError(Exception):
    """A policy could not be loaded; the message is one sentence meant for the user."""


@dataclass(frozen=True)
class TinySize:
    """Shape of a built-in model; the vocabulary comes from the tokenizer."""

    hidden: int
    layers: int
    heads: int
    kv_heads: int
    intermediate: int
    max_positions: int = 1024


# Parameter counts below are for a ~1,500-word vocabulary (tied embeddings count once).
TINY_SIZES: dict[str, TinySize] = {
    # ~0.35M: fast unit tests.
    "tiny": TinySize(hidden=96, layers=2, heads=4, kv_heads=2, intermediate=256),
    # ~1.9M: the built-in policy that learns the built-in worlds on a laptop CPU.
    "default": TinySize(hidden=192, layers=4, heads=4, kv_heads=2, intermediate=512),
}


def build_tiny_model(
    tokenizer: PreTrainedTokenizerBase, size: str = "default", seed: int = 0
) -> PreTrainedModel:
    """A freshly initialised Qwen2ForCausalLM sized by name; same seed, same weights."""
    if size not in TINY_SIZES:
        raise ValueError(f"unknown model size '{size}'; choose one of {sorted(TINY_SIZES)}")
    shape = TINY_SIZES[size]
    config = Qwen2Config(
        vocab_size=len(tokenizer),
        hidden_size=shape.hidden,
        num_hidden_layers=shape.layers,
        num_attention_heads=shape.heads,
        num_key_value_heads=shape.kv_heads,
        intermediate_size=shape.intermediate,
        max_position_embeddings=shape.max_positions,
        tie_word_embeddings=True,
        pad_token_id=tokenizer.pad_token_id,
        eos_token_id=tokenizer.eos_token_id,
        bos_token_id=None,
    )
    # Initialisation draws from torch's global generator; fork it so building a model does not
    # shift the random stream of whoever called us.
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = Qwen2ForCausalLM(config)
    model.generation_config.pad_token_id = tokenizer.pad_token_id
    model.generation_config.eos_token_id = tokenizer.eos_token_id
    return model


_DTYPES = {"auto": "auto", "float32": torch.float32, "bfloat16": torch.bfloat16}
# owner/name or name, as on the Hugging Face Hub.
_HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]*(/[\w.-]+)?$")


def _check_source(name_or_path: str) -> None:
    if os.path.isdir(name_or_path):
        return
    if os.path.exists(name_or_path):
        raise PolicyLoadError(
            f"'{name_or_path}' is a file; a policy is a model folder or a hub id."
        )
    if not _HUB_ID.match(name_or_path) or name_or_path.startswith((".", "~")):
        raise PolicyLoadError(f"there is no model folder at '{name_or_path}'.")


def _one_line(error: Exception) -> str:
    text = str(error).strip().splitlines()
    return text[0] if text else type(error).__name__


def _enable_checkpointing(model: PreTrainedModel) -> None:
    # transformers 5 renamed gradient_checkpointing_enable (removed in v6); the non-reentrant
    # variant works with inputs that do not require grad (frozen embeddings, LoRA).
    options = {"use_reentrant": False}
    if hasattr(model, "activation_checkpointing_enable"):
        model.activation_checkpointing_enable(activation_checkpointing_kwargs=options)
    else:
        model.gradient_checkpointing_enable(gradient_checkpointing_kwargs=options)


def load_policy(
    name_or_path: str,
    device: str = "cpu",
    dtype: str = "auto",
    gradient_checkpointing: bool = False,
) -> tuple[PreTrainedModel, PreTrainedTokenizerBase]:
    """Any causal LM with a chat template, from a local folder or a hub id.

    dtype "auto" keeps the checkpoint's own dtype. Padding side is left to our own code
    (generation left-pads, scoring builds its own layout), so it is not touched here.
    """
    if dtype not in _DTYPES:
        raise PolicyLoadError(f"unknown dtype '{dtype}'; choose one of {sorted(_DTYPES)}.")
    _check_source(name_or_path)
    try:
        tokenizer = AutoTokenizer.from_pretrained(name_or_path)
        model = AutoModelForCausalLM.from_pretrained(name_or_path, dtype=_DTYPES[dtype])
        model.to(device)
    except Exception as error:  # transformers raises OSError, ValueError, KeyError, ...
        raise PolicyLoadError(
            f"could not load a causal language model from '{name_or_path}': {_one_line(error)}"
        ) from None
    if tokenizer.chat_template is None:
        raise PolicyLoadError(f"the tokenizer of '{name_or_path}' has no chat template.")
    if tokenizer.eos_token_id is None:
        raise PolicyLoadError(f"the tokenizer of '{name_or_path}' has no end-of-sequence token.")
    if tokenizer.pad_token_id is None:
        # Pads are always masked out, so any id works; eos is the usual choice.
        tokenizer.pad_token = tokenizer.eos_token
    if gradient_checkpointing:
        _enable_checkpointing(model)
    model.eval()
    return model, tokenizer
