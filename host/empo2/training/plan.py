"""`empo2-host plan`: will this config fit these GPUs? Per-rank memory, without loading weights.

    empo2-host plan --preset scienceworld-power-component --world 8 --gpu-memory 80GB
    empo2-host plan --preset scienceworld-power-component --world 8 dist.strategy=ddp

The model is built on PyTorch's meta device from its config.json (a local folder, the Hugging Face
cache, or for the paper's Qwen2.5-7B-Instruct the copy of its config.json shipped in
empo2/model_configs/, since no hub is needed to count parameters). Parameters are counted from
the meta tensors; everything else follows from the config. The figures are estimates with these
assumptions, each stated so it can be checked against a measurement (gpu_check.py):

1. Bytes per value: fp32 master weights, gradients and two Adam moments under mixed-bfloat16
   (4 + 4 + 8); bf16 weights and moments under bfloat16. ddp also holds one flat fp32 buffer of
   all gradients for its single all-reduce (distributed.py).
2. fsdp2 divides weights, gradients and moments by the world size. While a layer computes, its
   full weights exist in bf16, plus the next one prefetched, plus the root (embeddings, head), and
   each layer's full fp32 gradient before its reduce-scatter.
3. Rollouts (sharding.py, choice 1) gather the whole model in the compute dtype on every rank and
   hold a KV cache of generation_batch × max_sequence_tokens tokens.
4. Activations of one micro-batch (algo.micro_batch sequences of policy.max_sequence_tokens):
   with gradient checkpointing each layer keeps its bf16 input and one layer is recomputed in
   full; per layer and token, 2·(8h + 2·kv + 3·i) bytes (h hidden, kv key/value width, i MLP
   width; SDPA attention keeps no s×s scores). Logits only for the response tokens
   (policy.max_action_tokens + 1, fp32, three copies: logits, log-softmax, entropy).
5. A GPU fits when the larger of the update peak and the rollout peak is below 90% of its memory
   (CUDA context, allocator fragmentation and NCCL buffers take the rest).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from ..config import TrainConfig

GIB = 1024**3
USABLE = 0.9  # assumption 5


class PlanError(ValueError):
    """A model whose config cannot be found; one sentence."""


@dataclass
class Shape:
    parameters: int
    trainable: int
    layers: int
    hidden: int
    kv_width: int
    mlp_width: int
    vocab: int
    root_parameters: int  # embeddings, final norm, untied head: the fsdp2 root unit


def parse_memory(text: str) -> float:
    """'80GB', '141 GiB', '80' -> bytes (GB and GiB both read as 2**30: GPU makers' '80 GB' is
    80 GiB of HBM)."""
    cleaned = text.strip().upper().replace(" ", "")
    for suffix in ("GIB", "GB", "G"):
        if cleaned.endswith(suffix):
            cleaned = cleaned[: -len(suffix)]
            break
    try:
        value = float(cleaned)
    except ValueError:
        raise PlanError(f"--gpu-memory must look like 80GB, not {text!r}") from None
    if value <= 0:
        raise PlanError("--gpu-memory must be positive")
    return value * GIB


def _shipped_config(name: str) -> dict | None:
    folder = resources.files("empo2") / "model_configs"
    wanted = name.split("/")[-1].lower()
    for entry in folder.iterdir():
        if entry.name.lower() == f"{wanted}.json":
            return json.loads(entry.read_text())
    return None


def model_config(name: str):
    """The transformers config of a folder, a cached hub id, or a shipped copy."""
    from transformers import AutoConfig

    from .trainer import resolve_model

    name = resolve_model(name)  # the built-in and packaged models: their folder in the cache
    if Path(name, "config.json").is_file():
        return AutoConfig.from_pretrained(name)
    shipped = _shipped_config(name)
    if shipped is not None:
        model_type = shipped.pop("model_type")
        return AutoConfig.for_model(model_type, **shipped)
    try:
        return AutoConfig.from_pretrained(name)
    except Exception:  # noqa: BLE001 - offline, unknown id, ...: one sentence
        raise PlanError(
            f"no config.json for model {name!r}: give a local folder (shipped: "
            f"{', '.join(sorted(p.name[:-5] for p in (resources.files('empo2') / 'model_configs').iterdir()))})"
        ) from None


def model_shape(config: TrainConfig) -> Shape:
    """Counts the parameters on the meta device (no memory, no weights)."""
    import torch
    from transformers import AutoModelForCausalLM

    hf = model_config(config.policy.model)
    with torch.device("meta"):
        model = AutoModelForCausalLM.from_config(hf)
    total = sum(p.numel() for p in model.parameters())
    root = sum(p.numel() for n, p in model.named_parameters() if ".layers." not in n)
    p = config.policy
    trainable = total
    if p.lora_rank:
        trainable = sum(
            p.lora_rank * (m.in_features + m.out_features)
            for n, m in model.named_modules()
            if isinstance(m, torch.nn.Linear) and n.rsplit(".", 1)[-1] in p.lora_targets
        )
    heads = hf.num_attention_heads
    head_dim = getattr(hf, "head_dim", None) or hf.hidden_size // heads
    kv = 2 * getattr(hf, "num_key_value_heads", heads) * head_dim
    return Shape(
        parameters=total,
        trainable=trainable,
        layers=hf.num_hidden_layers,
        hidden=hf.hidden_size,
        kv_width=kv,
        mlp_width=hf.intermediate_size,
        vocab=hf.vocab_size,
        root_parameters=root,
    )


def plan(config: TrainConfig, world: int, gpu_memory: float | None = None) -> dict:
    """Per-rank bytes for the config's strategy, sequence length and micro-batch."""
    shape = model_shape(config)
    p, algo = config.policy, config.algo
    mixed = p.dtype == "mixed-bfloat16"
    master = 4 if mixed or p.dtype == "float32" else 2
    compute = 2 if p.dtype in ("mixed-bfloat16", "bfloat16", "auto") else 4
    fsdp = config.dist.strategy == "fsdp2"
    split = world if fsdp else 1
    per_layer = (shape.parameters - shape.root_parameters) / max(shape.layers, 1)

    weights = shape.parameters * master / split
    grads = shape.trainable * master / split
    optimizer = shape.trainable * 2 * master / split
    if fsdp:
        # Assumption 2: two gathered layers, the root, one layer's full fp32 gradient.
        comm = (2 * per_layer + shape.root_parameters) * compute + per_layer * 4
    else:
        comm = shape.trainable * 4  # the flat all-reduce buffer
    reference = shape.parameters * compute / split if algo.kl_beta > 0 and not p.lora_rank else 0

    seq = p.max_sequence_tokens or 4096
    tokens = algo.micro_batch * seq
    layer_activation = 2 * tokens * (8 * shape.hidden + 2 * shape.kv_width + 3 * shape.mlp_width)
    if p.gradient_checkpointing:
        activations = shape.layers * 2 * tokens * shape.hidden + layer_activation
    else:
        activations = shape.layers * layer_activation
    logits = 3 * algo.micro_batch * (p.max_action_tokens + 1) * shape.vocab * 4
    update_peak = weights + grads + optimizer + comm + reference + activations + logits

    gathered = shape.parameters * compute if fsdp else 0  # assumption 3 (ddp: weights are whole)
    kv_cache = p.generation_batch * seq * shape.layers * shape.kv_width * compute
    rollout_peak = weights + grads + optimizer + reference + gathered + kv_cache
    if config.dist.cpu_offload and fsdp:
        update_peak -= weights + grads + optimizer
        rollout_peak -= weights + grads + optimizer
    peak = max(update_peak, rollout_peak)
    result = {
        "model": config.policy.model,
        "strategy": config.dist.strategy,
        "world": world,
        "cpu_offload": config.dist.cpu_offload,
        "dtype": p.dtype,
        "sequence_tokens": seq,
        "micro_batch": algo.micro_batch,
        "gradient_checkpointing": p.gradient_checkpointing,
        "parameters": shape.parameters,
        "trainable_parameters": shape.trainable,
        "per_rank_gib": {
            k: round(v / GIB, 2)
            for k, v in {
                "parameters": weights,
                "gradients": grads,
                "optimizer": optimizer,
                "communication": comm,
                "reference": reference,
                "activations": activations,
                "logits": logits,
                "rollout_gathered_weights": gathered,
                "rollout_kv_cache": kv_cache,
                "update_peak": update_peak,
                "rollout_peak": rollout_peak,
                "peak": peak,
            }.items()
        },
    }
    if gpu_memory is not None:
        result["gpu_memory_gib"] = round(gpu_memory / GIB, 1)
        result["fits"] = peak <= USABLE * gpu_memory
    return result


def table(rows: list[dict]) -> str:
    """A markdown table of several plans (docs/benchmarks.md)."""
    head = (
        "| strategy | world | GPU | weights | grads | Adam | activations | update peak | "
        "rollout peak | fits |\n|---|---|---|---|---|---|---|---|---|---|"
    )
    lines = [head]
    for r in rows:
        g = r["per_rank_gib"]
        lines.append(
            f"| {r['strategy']} | {r['world']} | {r.get('gpu_memory_gib', '')} GiB | "
            f"{g['parameters']} | {g['gradients']} | {g['optimizer']} | {g['activations']} | "
            f"{g['update_peak']} | {g['rollout_peak']} | {'yes' if r.get('fits') else 'no'} |"
        )
    return "\n".join(lines)
