"""Tokens scored per second: PyTorch (the host's replay) against onnxruntime-node (the extension).

    npm run build:tests                                       # compiles src/scoring/ into out/tests
    .venv/bin/python host/benchmarks/onnx_scoring.py          # the built-in policy (built once)
    .venv/bin/python host/benchmarks/onnx_scoring.py --policy PATH --rows 64 --prompt 300

What is timed is what each side runs to replay a recorded episode: on the host,
`generation.sequence_alternatives` (one forward pass per batch of 16 rows, log-softmax at the
temperature, the token's log-prob and the top-5), the function the debugger's replay calls; in the
extension, `OnnxPolicy.score` from src/scoring/onnxPolicy.ts (the same batches through
onnxruntime-node's CPU provider, log-softmax and top-5 in JavaScript), run by Node on the
compiled file. The policy is exported with `empo2-host export-onnx` into a temporary folder first.

Both sides get the same rows (prompts of about --prompt tokens, responses of --response tokens,
random ids from the vocabulary, a fixed seed), the same number of threads, one warm-up pass and
--repeats timed passes over all rows, in the same run; PyTorch is timed before and after the
runtime, so a machine that gets busier slows both alike. Prints the medians in tokens scored per
second (response tokens: the ones whose log-probs a replay shows), the ratio onnx / torch, and
the largest |onnx − torch| log-prob on these rows.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HOST_ROOT = Path(__file__).resolve().parents[1]
REPO = HOST_ROOT.parent
sys.path.insert(0, str(HOST_ROOT))
SCORER = REPO / "out" / "tests" / "src" / "scoring" / "onnxPolicy.js"

# Loads the export once, then: a warm-up pass, `repeats` timed passes; prints timings and log-probs.
NODE_RUN = """
const { OnnxPolicy } = require(process.argv[1]);
const rows = JSON.parse(require('fs').readFileSync(process.argv[3], 'utf8'));
const repeats = Number(process.argv[4]), threads = Number(process.argv[5]), temperature = Number(process.argv[6]);
(async () => {
  const policy = await OnnxPolicy.load(process.argv[2], { threads });
  const first = await policy.score(rows, temperature);
  const seconds = [];
  for (let r = 0; r < repeats; r++) {
    const t0 = process.hrtime.bigint();
    await policy.score(rows, temperature);
    seconds.push(Number(process.hrtime.bigint() - t0) / 1e9);
  }
  await policy.dispose();
  console.log(JSON.stringify({ seconds, logprobs: first.map((row) => row.logprobs) }));
})().catch((error) => { console.error(error.message); process.exit(1); });
"""


def make_rows(vocab: int, count: int, prompt: int, response: int, seed: int) -> list[dict]:
    import torch

    g = torch.Generator().manual_seed(seed)
    rows = []
    for _ in range(count):
        p_len = int(torch.randint(max(2, prompt // 2), prompt + prompt // 2 + 1, (1,), generator=g))
        rows.append(
            {
                "prompt": torch.randint(6, vocab, (p_len,), generator=g).tolist(),
                "response": torch.randint(6, vocab, (response,), generator=g).tolist(),
            }
        )
    return rows


def torch_pass(model, rows, temperature, pad) -> list[list[float]]:
    from empo2.debug.replay import SCORING_BATCH
    from empo2.policy.generation import sequence_alternatives

    out = []
    for start in range(0, len(rows), SCORING_BATCH):
        batch = rows[start : start + SCORING_BATCH]
        logp, _, _, _ = sequence_alternatives(
            model, [r["prompt"] for r in batch], [r["response"] for r in batch], 5, temperature, pad
        )
        out += [logp[i, : len(r["response"])].tolist() for i, r in enumerate(batch)]
    return out


def time_torch(model, rows, temperature, pad, repeats) -> list[float]:
    seconds = []
    for _ in range(repeats):
        started = time.perf_counter()
        torch_pass(model, rows, temperature, pad)
        seconds.append(time.perf_counter() - started)
    return seconds


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--policy", default="builtin", help="a model folder or 'builtin' (default)")
    parser.add_argument("--rows", type=int, default=64, help="rows (prompt + response) per pass")
    parser.add_argument("--prompt", type=int, default=200, help="typical prompt length in tokens")
    parser.add_argument("--response", type=int, default=8, help="response tokens per row")
    parser.add_argument("--repeats", type=int, default=5, help="timed passes per side")
    parser.add_argument("--threads", type=int, default=None, help="threads of both (default: torch's)")
    parser.add_argument("--temperature", type=float, default=1.0)
    args = parser.parse_args()
    if not SCORER.is_file():
        print(f"onnx_scoring: {SCORER.relative_to(REPO)} is missing; run `npm run build:tests` first.", file=sys.stderr)
        return 2

    import torch

    from empo2.export.onnx import export_onnx
    from empo2.policy.model import load_policy
    from empo2.training.trainer import resolve_model

    threads = args.threads or torch.get_num_threads()
    torch.set_num_threads(threads)
    policy = resolve_model(args.policy)
    model, tokenizer = load_policy(policy, device="cpu", dtype="float32")
    params = sum(p.numel() for p in model.parameters())
    rows = make_rows(len(tokenizer), args.rows, args.prompt, args.response, seed=0)
    tokens = sum(len(r["response"]) for r in rows)
    pad = tokenizer.pad_token_id or 0
    with tempfile.TemporaryDirectory(prefix="empo2-onnx-bench-") as scratch:
        started = time.perf_counter()
        export_onnx(policy, Path(scratch) / "export")
        export_s = time.perf_counter() - started
        rows_file = Path(scratch) / "rows.json"
        rows_file.write_text(json.dumps(rows))

        reference = torch_pass(model, rows, args.temperature, pad)  # warm-up, and the parity reference
        torch_s = time_torch(model, rows, args.temperature, pad, args.repeats)
        node = subprocess.run(
            [
                "node",
                "-e",
                NODE_RUN,
                str(SCORER),
                str(Path(scratch) / "export"),
                str(rows_file),
                str(args.repeats),
                str(threads),
                str(args.temperature),
            ],
            capture_output=True,
            text=True,
            cwd=REPO,
            env=dict(os.environ),
        )
        if node.returncode != 0:
            print(f"onnx_scoring: node failed: {node.stderr.strip()[-2000:]}", file=sys.stderr)
            return 1
        measured = json.loads(node.stdout.strip().splitlines()[-1])
        torch_s += time_torch(model, rows, args.temperature, pad, args.repeats)

    worst = max(abs(a - b) for ra, rb in zip(measured["logprobs"], reference) for a, b in zip(ra, rb))
    torch_rate = tokens / statistics.median(torch_s)
    onnx_rate = tokens / statistics.median(measured["seconds"])
    print(f"policy {policy} ({params / 1e6:.2f}M parameters, vocabulary {len(tokenizer)}); export {export_s:.1f} s")
    print(
        f"{args.rows} rows of ~{args.prompt} prompt + {args.response} response tokens, {threads} threads, "
        f"{args.repeats} passes each (torch {2 * args.repeats}: before and after)"
    )
    print(f"torch            {torch_rate:10.0f} tokens scored/s   (median pass {statistics.median(torch_s):.3f} s)")
    print(
        f"onnxruntime-node {onnx_rate:10.0f} tokens scored/s   "
        f"(median pass {statistics.median(measured['seconds']):.3f} s)"
    )
    print(f"onnx/torch ratio {onnx_rate / torch_rate:.2f}")
    print(f"largest |onnx - torch| log-prob {worst:.2e}")
    print(
        json.dumps(
            {
                "torch_tokens_per_s": torch_rate,
                "onnx_tokens_per_s": onnx_rate,
                "ratio": onnx_rate / torch_rate,
                "max_abs_logprob_diff": worst,
                "threads": threads,
                "parameters": params,
            }
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
