"""GPU check: a short EMPO² run with a randomly initialised Qwen2.5-0.5B-shaped model.

    .venv/bin/python host/benchmarks/gpu_check.py              # one NVIDIA GPU, under 8 minutes
    .venv/bin/python host/benchmarks/gpu_check.py --smoke      # CPU, tiny shape: the code path only

Runs twice, once per dist.strategy (ddp, then fsdp2 at world size 1 with bf16 compute on fp32
master shards), and prints both and their ratios, so one run on a GPU machine measures both strategies.

Needs PyTorch, transformers and peft, and nothing from the network or Java: the model's config is
written here (Qwen2.5-0.5B's shape: 24 layers, hidden 896, 14 heads, 2 key/value heads, MLP 4864,
vocabulary 151,936, tied embeddings), its weights are random, its tokenizer is the built-in word
tokenizer (ids below the vocabulary size), and the environment is the built-in worlds. The run is
the real trainer (rollout with the KV cache, tips, memory, the update with gradient checkpointing,
bf16). It prints:

  rollout tokens/s   generated action tokens per second of the rollout's generation time
  update tokens/s    sequence tokens (prompt + action) per second of update time
  MFU                model FLOPs per second over the GPU's peak (H200/H100 bf16 dense: 989 TFLOP/s)
  peak GPU memory    torch.cuda.max_memory_allocated

FLOPs count 2·N per token forwarded and 6·N per token trained (N = parameters outside the
embedding), plus one more forward per trained token for gradient checkpointing and one for the
π_old pass; attention's quadratic term is left out (short prompts), so MFU is a lower bound.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from empo2 import metric_keys as metric  # noqa: E402
from empo2.config import load_config  # noqa: E402
from empo2.memory.embedding import SentenceEmbedder  # noqa: E402
from empo2.policy.builtin import vocabulary_corpus  # noqa: E402
from empo2.policy.demos import PromptShape  # noqa: E402
from empo2.policy.tokenizer import build_word_tokenizer  # noqa: E402
from empo2.run_folder.folder import RunFolder  # noqa: E402
from empo2.training.trainer import Trainer  # noqa: E402

QWEN25_05B = dict(
    hidden_size=896,
    num_hidden_layers=24,
    num_attention_heads=14,
    num_key_value_heads=2,
    intermediate_size=4864,
    vocab_size=151_936,
    max_position_embeddings=32_768,
    rope_theta=1_000_000.0,
    rms_norm_eps=1e-6,
    tie_word_embeddings=True,
)
SMOKE = dict(
    hidden_size=64,
    num_hidden_layers=2,
    num_attention_heads=4,
    num_key_value_heads=2,
    intermediate_size=128,
    max_position_embeddings=2048,
    tie_word_embeddings=True,
)
PEAK_TFLOPS = {"H200": 989.5, "H100": 989.5, "A100": 312.0, "L40S": 362.0, "A10": 125.0}


def build_model_folder(folder: Path, smoke: bool, device: str) -> int:
    """Writes a random Qwen2 model and the word tokenizer; returns the non-embedding parameters."""
    from transformers import Qwen2Config, Qwen2ForCausalLM

    tokenizer = build_word_tokenizer(vocabulary_corpus(PromptShape(), 15))
    shape = dict(SMOKE if smoke else QWEN25_05B)
    shape.setdefault("vocab_size", len(tokenizer))
    config = Qwen2Config(
        **shape, pad_token_id=tokenizer.pad_token_id, eos_token_id=tokenizer.eos_token_id, bos_token_id=None
    )
    dtype = torch.bfloat16 if device == "cuda" else torch.float32
    with torch.device(device):
        model = Qwen2ForCausalLM(config).to(dtype)
    model.generation_config.pad_token_id = tokenizer.pad_token_id
    model.generation_config.eos_token_id = tokenizer.eos_token_id
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    embedding = model.get_input_embeddings().weight.numel()
    return sum(p.numel() for p in model.parameters()) - embedding


def run_config(model_folder: Path, smoke: bool, iterations: int) -> dict:
    if smoke:
        algo = {"batch_tasks": 2, "group_size": 2, "micro_batch": 4}
        policy = {"max_action_tokens": 4, "max_tip_tokens": 8}
        steps = 3
    else:
        algo = {"batch_tasks": 8, "group_size": 8, "micro_batch": 32}
        policy = {"max_action_tokens": 32, "max_tip_tokens": 64}
        steps = 10
    return {
        "iterations": iterations,
        "checkpoint_every": 1000,
        "eval": {"every": 0},
        "env": {"name": "builtin", "max_steps": steps},
        "policy": {
            "model": str(model_folder),
            "dtype": "auto",
            "gradient_checkpointing": True,
            "generation_batch": 64,
            "max_sequence_tokens": 1024,
            **policy,
        },
        "algo": {"p_memory": 0.5, "q_off_policy": 0.6666666666666666, "lr": 1e-6, "minibatches": 2, **algo},
    }


def measure(args, strategy: str, iterations: int) -> dict:
    """One short training run with the given dist.strategy; its figures."""
    device = "cpu" if args.smoke else "cuda"
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="empo2-gpu-check-") as scratch:
        scratch = Path(scratch)
        n_params = build_model_folder(scratch / "model", args.smoke, device)
        config = load_config(run_config(scratch / "model", args.smoke, iterations))
        config.policy.device = device
        config.dist.strategy = strategy
        if strategy == "fsdp2" and device == "cuda":
            config.policy.dtype = "mixed-bfloat16"  # FSDP2's bf16 compute on fp32 master shards
        folder = RunFolder.create(scratch / "runs", f"gpu-check-{strategy}", config.to_dict())
        if device == "cuda":
            torch.cuda.reset_peak_memory_stats()
        trainer = Trainer(config, folder, embedder=SentenceEmbedder(device="cpu"))
        trainer.run()
        trainer.close()
        trainer.dist.close()  # the one-process group FSDP2 made
        metrics = folder.metrics()
        steps = [s for m in metrics for s in _steps(folder, m["iteration"])]
        peak = torch.cuda.max_memory_allocated() / 2**30 if device == "cuda" else 0.0
        name = torch.cuda.get_device_name() if device == "cuda" else "cpu"
    # The first iteration warms up kernels and allocators; measure the rest when there are any.
    measured = metrics[1:] or metrics
    first = measured[0]["iteration"]
    steps = [s for s in steps if s["iteration"] >= first]
    generated = sum(len(s["action_ids"]) for s in steps)
    prompts = sum(len(s["prompt_ids"]) for s in steps)
    t_gen = sum(m.get(metric.ROLLOUT_TIME_PREFIX + "generation", 0.0) for m in measured)
    t_tips = sum(m[metric.TIME_PREFIX + "tips"] for m in measured)
    t_update = sum(m[metric.TIME_PREFIX + "update"] for m in measured)
    update_tokens = sum(m[metric.THROUGHPUT_UPDATE] * m[metric.TIME_PREFIX + "update"] for m in measured)
    flops = (
        2 * n_params * (prompts + generated)  # rollout: prefill + decode
        + (2 + 6 + 2) * n_params * update_tokens
    )  # π_old forward, train step, recompute
    peak_tflops = args.peak_tflops or next((v for k, v in PEAK_TFLOPS.items() if k in name), None)
    mfu = flops / (t_gen + t_update) / (peak_tflops * 1e12) if peak_tflops else None
    return {
        "strategy": strategy,
        "device": name,
        "model": "smoke" if args.smoke else "Qwen2.5-0.5B shape (random init)",
        "non_embedding_params": n_params,
        "iterations_measured": len(measured),
        "rollout_tokens_per_s": generated / max(t_gen, 1e-9),
        "update_tokens_per_s": update_tokens / max(t_update, 1e-9),
        "mfu": mfu,
        "peak_gpu_memory_gib": peak,
        "seconds": {"generation": t_gen, "tips": t_tips, "update": t_update, "total": time.perf_counter() - started},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--smoke", action="store_true", help="CPU, tiny shape, one iteration")
    parser.add_argument("--iterations", type=int, default=None, help="default: 4 (smoke: 1)")
    parser.add_argument(
        "--peak-tflops", type=float, default=None, help="the GPU's dense bf16 peak (default: looked up by name)"
    )
    parser.add_argument(
        "--strategies", default="ddp,fsdp2", help="dist.strategy values to measure, one run each (default: ddp,fsdp2)"
    )
    args = parser.parse_args()
    if not args.smoke and not torch.cuda.is_available():
        print("gpu_check: no CUDA device; use --smoke to exercise the code path on CPU", file=sys.stderr)
        sys.exit(2)
    strategies = [s.strip() for s in args.strategies.split(",") if s.strip()]
    unknown = [s for s in strategies if s not in ("ddp", "fsdp2")]
    if unknown:
        print(f"gpu_check: unknown strategy {unknown[0]!r}; choose ddp or fsdp2", file=sys.stderr)
        sys.exit(2)
    iterations = args.iterations or (1 if args.smoke else 4)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    reports = [measure(args, strategy, iterations) for strategy in strategies]
    for report in reports:
        mfu = report["mfu"]
        print(f"== {report['strategy']} on {report['device']}")
        print(f"rollout tokens/s   {report['rollout_tokens_per_s']:,.0f}")
        print(f"update tokens/s    {report['update_tokens_per_s']:,.0f}")
        print(
            f"MFU                {mfu:.1%}"
            if mfu is not None
            else "MFU                n/a (unknown peak; pass --peak-tflops)"
        )
        print(f"peak GPU memory    {report['peak_gpu_memory_gib']:.2f} GiB")
    if len(reports) == 2:  # the second strategy against the first, measured in this run
        base, other = reports
        for key in ("rollout_tokens_per_s", "update_tokens_per_s", "peak_gpu_memory_gib"):
            if base[key]:
                print(f"{other['strategy']}/{base['strategy']} {key}: {other[key] / base[key]:.2f}")
    print(json.dumps(reports))


def _steps(folder: RunFolder, iteration: int) -> list[dict]:
    return [dict(s, iteration=iteration) for ep in folder.trajectories(iteration) for s in ep["steps"]]


if __name__ == "__main__":
    main()
