"""Building the built-in policy and loading any causal LM as the policy.

The built-in model is a Qwen2ForCausalLM: the same architecture class as the real target
(Qwen2.5-7B-Instruct), so the tiny CPU runs exercise the very code paths (q/k/v biases, grouped
key/value heads, RoPE, its cache and masks) that a GPU run uses; only the sizes differ.

Any Hugging Face causal LM with a chat template loads by folder or hub id (`load_policy`): bf16
on CUDA, fp32 on CPU unless told otherwise; optional gradient checkpointing; optional LoRA
adapters through peft, where only the adapters train and only they are saved; a folder that holds
a saved adapter (adapter_config.json) loads its base model and the adapter on top.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass

import torch
from transformers import (
    AutoModelForCausalLM,
    AutoTokenizer,
    PreTrainedModel,
    PreTrainedTokenizerBase,
    PreTrainedTokenizerFast,
    Qwen2Config,
    Qwen2ForCausalLM,
)
from transformers.utils import logging as hf_logging

from .choices import model_folder_problem

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
    # ~1.7M: the built-in policy that learns the built-in worlds on a laptop CPU.
    "default": TinySize(hidden=192, layers=4, heads=4, kv_heads=2, intermediate=512),
    # ~9.5M (5.7× default): the same demonstrations and schedule at twice the width and 1.5× the
    # depth, at half the default's rate (builtin.py's SIZE_LR), to test whether the default is
    # too small to read and write tips (`policy.model=builtin:large`; its build is about four
    # times the default's).
    "large": TinySize(hidden=384, layers=6, heads=6, kv_heads=2, intermediate=1024),
}


def build_tiny_model(tokenizer: PreTrainedTokenizerBase, size: str = "default", seed: int = 0) -> PreTrainedModel:
    """A freshly initialised Qwen2ForCausalLM sized by name; same seed, same weights."""
    config = tiny_config(tokenizer, size)
    # Initialisation draws from torch's global generator; fork it so building a model does not
    # shift the random stream of whoever called us.
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = Qwen2ForCausalLM(config)
    model.generation_config.pad_token_id = tokenizer.pad_token_id
    model.generation_config.eos_token_id = tokenizer.eos_token_id
    return model


def tiny_config(tokenizer: PreTrainedTokenizerBase, size: str = "default") -> Qwen2Config:
    """The transformers config of a built-in size with this tokenizer's vocabulary."""
    if size not in TINY_SIZES:
        raise ValueError(f"unknown model size '{size}'; choose one of {sorted(TINY_SIZES)}")
    shape = TINY_SIZES[size]
    return Qwen2Config(
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


MIXED_BF16 = "mixed-bfloat16"
_DTYPES = {
    "auto": "auto",
    "float32": torch.float32,
    "bfloat16": torch.bfloat16,
    # fp32 master weights (what the optimizer updates), bf16 matmuls under autocast:
    # a full fine-tune at lr 1e-6 needs it, since a bf16 weight cannot hold a 1e-6 step.
    MIXED_BF16: torch.float32,
}


def load_tokenizer(name_or_path: str) -> PreTrainedTokenizerBase:
    """The tokenizer saved with a policy, as it was saved.

    AutoTokenizer picks the tokenizer class from the model type when the folder has a
    config.json: for the built-in Qwen2 model that is Qwen2Tokenizer, which rebuilds a byte-level
    BPE from our word vocabulary and silently mangles every prompt. A folder whose
    tokenizer_config.json names the generic fast tokenizer is loaded as exactly that.
    """
    config = os.path.join(name_or_path, "tokenizer_config.json")
    if os.path.isfile(config):
        with open(config) as f:
            declared = json.load(f).get("tokenizer_class")
        if declared in ("TokenizersBackend", "PreTrainedTokenizerFast"):
            return PreTrainedTokenizerFast.from_pretrained(name_or_path)
    return AutoTokenizer.from_pretrained(name_or_path)


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


@dataclass(frozen=True)
class LoraSettings:
    """LoRA adapters through peft (policy.lora_* in the config)."""

    rank: int
    alpha: float = 32.0
    dropout: float = 0.0
    targets: tuple[str, ...] = ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj")


def compute_dtype(model: PreTrainedModel) -> torch.dtype | None:
    """The autocast dtype of a mixed-precision policy (None: compute in the weights' dtype)."""
    return getattr(model, "empo2_compute_dtype", None)


def resolve_dtype(dtype: str, device: str) -> str:
    """'auto' is bfloat16 on CUDA and float32 elsewhere (CPU bf16 matmuls are slow and lossy)."""
    if dtype != "auto":
        return dtype
    return "bfloat16" if str(device).startswith("cuda") else "float32"


def is_adapter_folder(path: str) -> bool:
    return os.path.isfile(os.path.join(path, "adapter_config.json"))


def load_policy(
    name_or_path: str,
    device: str = "cpu",
    dtype: str = "auto",
    gradient_checkpointing: bool = False,
    lora: LoraSettings | None = None,
) -> tuple[PreTrainedModel, PreTrainedTokenizerBase]:
    """Any causal LM with a chat template, from a local folder or a hub id.

    dtype "auto": bfloat16 on CUDA, float32 elsewhere; "mixed-bfloat16": float32 weights, bf16
    compute (generation.py runs every forward pass under autocast). lora: wrap the model in fresh trainable
    adapters (every base weight frozen). A folder with a saved adapter loads its base model from
    the adapter's `base_model_name_or_path` and the adapter on top, trainable. Padding side is left
    to our own code (generation left-pads, scoring builds its own layout).
    """
    if dtype not in _DTYPES:
        raise PolicyLoadError(f"unknown dtype '{dtype}'; choose one of {sorted(_DTYPES)}.")
    # One rule for what can hold a model, the one the CLI and the new-run form check before.
    problem = model_folder_problem(name_or_path, named="the policy")
    if problem is not None:
        raise PolicyLoadError(problem)
    torch_dtype = _DTYPES[resolve_dtype(dtype, device)]
    try:
        if is_adapter_folder(name_or_path):
            model, tokenizer = _load_adapter(name_or_path, torch_dtype)
        else:
            tokenizer = load_tokenizer(name_or_path)
            model = AutoModelForCausalLM.from_pretrained(name_or_path, dtype=torch_dtype)
            if lora is not None and lora.rank > 0:
                model = _with_lora(model, lora)
        model.to(device)
    except PolicyLoadError:
        raise
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
    if dtype == MIXED_BF16:
        model.empo2_compute_dtype = torch.bfloat16
    model.eval()
    return model, tokenizer


def _with_lora(model: PreTrainedModel, lora: LoraSettings) -> PreTrainedModel:
    from peft import LoraConfig, get_peft_model

    present = {name.rsplit(".", 1)[-1] for name, _ in model.named_modules()}
    targets = [t for t in lora.targets if t in present]
    if not targets:
        raise PolicyLoadError(f"none of the LoRA target modules {list(lora.targets)} exist in this model.")
    config = LoraConfig(
        r=lora.rank, lora_alpha=lora.alpha, lora_dropout=lora.dropout, target_modules=targets, task_type="CAUSAL_LM"
    )
    return get_peft_model(model, config)


def _load_adapter(folder: str, torch_dtype) -> tuple[PreTrainedModel, PreTrainedTokenizerBase]:
    import json

    from peft import PeftModel

    base = json.loads(open(os.path.join(folder, "adapter_config.json")).read()).get("base_model_name_or_path")
    if not base:
        raise PolicyLoadError(f"the adapter in '{folder}' does not name its base model.")
    has_tokenizer = os.path.isfile(os.path.join(folder, "tokenizer_config.json"))
    tokenizer = load_tokenizer(folder if has_tokenizer else base)
    model = AutoModelForCausalLM.from_pretrained(base, dtype=torch_dtype)
    return PeftModel.from_pretrained(model, folder, is_trainable=True), tokenizer


def is_peft(model) -> bool:
    return hasattr(model, "peft_config") and hasattr(model, "disable_adapter")


class AdapterFreeView:
    """The base model under a LoRA policy, adapters switched off: the KL reference at no cost
    in memory (a 7B copy is 15 GB). Callable like the model, as sequence_logprobs calls it."""

    def __init__(self, model):
        self.model = model

    @property
    def device(self):
        return self.model.device

    def __call__(self, **inputs):
        with self.model.disable_adapter():
            return self.model(**inputs)
