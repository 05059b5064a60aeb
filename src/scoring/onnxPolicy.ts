// A policy exported by `empo2-host export-onnx` (host/empo2/export/onnx.py has the folder's
// layout), run with onnxruntime-node on the CPU: per-token log-probabilities of responses given
// their prompts, with no host. The rows are laid out exactly as the host's scoring pass lays them
// out (generation.pad_layout: left-padded prompts, then right-padded responses; the graph derives
// position ids from the mask), so the same rows give the host's numbers. No `vscode` import.

import { existsSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import type * as Ort from 'onnxruntime-node';

/** Written last by the export; its presence marks a whole export folder. */
export const MANIFEST_FILE = 'onnx_export.json';
const FORMAT_VERSION = 1;
/** Rows per forward pass: bounds the logits held at once (rows × width × vocabulary floats). */
export const SCORING_BATCH = 16;
export const TOP_K = 5;

/** onnx_export.json: what was exported (the host's MANIFEST fields). */
export interface OnnxManifest {
  readonly format: number;
  readonly source: string;
  readonly run: string | null;
  readonly iteration: number | null;
  /** The run's training temperature (null: a plain model folder). */
  readonly temperature: number | null;
  readonly model: string;
  readonly tokens: string;
  readonly inputs: string[];
  readonly output: string;
  readonly vocabSize: number;
  readonly padId: number | null;
  readonly eosId: number | null;
}

export interface ScoreRow {
  readonly prompt: readonly number[];
  readonly response: readonly number[];
}

export interface Alternative {
  readonly id: number;
  readonly logprob: number;
}

/** One response scored: per token its log-prob and the k most likely tokens there, best first. */
export interface ScoredRow {
  readonly logprobs: number[];
  readonly top: Alternative[][];
}

/** A folder that is not a usable export, or a runtime that cannot load; the message is one sentence. */
export class ScoringError extends Error {}

function loadRuntime(): typeof Ort {
  try {
    // Required lazily: the extension activates (and everything else works) where the native
    // runtime is missing for the platform; only local scoring then says so.
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    return require('onnxruntime-node') as typeof Ort;
  } catch (error) {
    throw new ScoringError(
      `onnxruntime-node does not load on ${process.platform}-${process.arch}: ${error instanceof Error ? error.message.split('\n')[0] : error}`,
    );
  }
}

export function readManifest(folder: string): OnnxManifest {
  const file = path.join(folder, MANIFEST_FILE);
  if (!existsSync(file)) {
    throw new ScoringError(
      `${folder} is not an ONNX export (no ${MANIFEST_FILE}); write one with \`empo2-host export-onnx\`.`,
    );
  }
  let manifest: OnnxManifest;
  try {
    manifest = JSON.parse(readFileSync(file, 'utf8')) as OnnxManifest;
  } catch (error) {
    throw new ScoringError(`${file} is not valid JSON: ${error instanceof Error ? error.message : error}`);
  }
  if (manifest.format !== FORMAT_VERSION) {
    throw new ScoringError(
      `${folder} is an ONNX export of format ${manifest.format}; this extension reads format ${FORMAT_VERSION} (export it again).`,
    );
  }
  return manifest;
}

/** log-softmax of logits[offset .. offset+size) / temperature, in float64. */
function logSoftmax(logits: Float32Array, offset: number, size: number, temperature: number): Float64Array {
  const scale = temperature > 0 ? 1 / temperature : 1;
  const out = new Float64Array(size);
  let max = -Infinity;
  for (let v = 0; v < size; v++) {
    out[v] = logits[offset + v] * scale;
    max = Math.max(max, out[v]);
  }
  let sum = 0;
  for (let v = 0; v < size; v++) {
    sum += Math.exp(out[v] - max);
  }
  const norm = max + Math.log(sum);
  for (let v = 0; v < size; v++) {
    out[v] -= norm;
  }
  return out;
}

function topK(logp: Float64Array, k: number): Alternative[] {
  const best: Alternative[] = [];
  for (let id = 0; id < logp.length; id++) {
    if (best.length < k || logp[id] > best[best.length - 1].logprob) {
      best.push({ id, logprob: logp[id] });
      // Stable on ties: the lower id stays first, as torch.topk returns on CPU in practice.
      best.sort((a, b) => b.logprob - a.logprob || a.id - b.id);
      best.length = Math.min(best.length, k);
    }
  }
  return best;
}

export class OnnxPolicy {
  private constructor(
    readonly folder: string,
    readonly manifest: OnnxManifest,
    private readonly session: Ort.InferenceSession,
    private readonly runtime: typeof Ort,
    private readonly tokens: string[],
  ) {}

  /** `threads`: onnxruntime's intra-op threads (default: its own choice, the physical cores). */
  static async load(folder: string, options: { threads?: number } = {}): Promise<OnnxPolicy> {
    const manifest = readManifest(folder);
    const modelFile = path.join(folder, manifest.model);
    const tokensFile = path.join(folder, manifest.tokens);
    for (const file of [modelFile, tokensFile]) {
      if (!existsSync(file)) {
        throw new ScoringError(`the ONNX export in ${folder} has no ${path.basename(file)}; export it again.`);
      }
    }
    const tokens = JSON.parse(readFileSync(tokensFile, 'utf8')) as string[];
    const runtime = loadRuntime();
    try {
      const session = await runtime.InferenceSession.create(modelFile, {
        executionProviders: ['cpu'],
        graphOptimizationLevel: 'all',
        ...(options.threads ? { intraOpNumThreads: options.threads } : {}),
      });
      return new OnnxPolicy(folder, manifest, session, runtime, tokens);
    } catch (error) {
      throw new ScoringError(
        `onnxruntime could not load ${modelFile}: ${error instanceof Error ? error.message.split('\n')[0] : error}`,
      );
    }
  }

  /** The text of a token id, as the host's tokenizer decodes it alone. */
  tokenText(id: number): string {
    return this.tokens[id] ?? `<${id}>`;
  }

  /** Scores each row's response given its prompt; the log-probs are at `temperature` (0: 1). */
  async score(rows: readonly ScoreRow[], temperature: number, k = TOP_K): Promise<ScoredRow[]> {
    const scored: ScoredRow[] = [];
    for (let start = 0; start < rows.length; start += SCORING_BATCH) {
      scored.push(...(await this.scoreBatch(rows.slice(start, start + SCORING_BATCH), temperature, k)));
    }
    return scored;
  }

  private async scoreBatch(rows: readonly ScoreRow[], temperature: number, k: number): Promise<ScoredRow[]> {
    if (rows.length === 0) {
      return [];
    }
    const widthP = Math.max(...rows.map((r) => r.prompt.length));
    const widthT = Math.max(...rows.map((r) => r.response.length));
    const width = widthP + widthT;
    if (widthP === 0 || width < 2) {
      throw new ScoringError('a row to score needs a prompt and a response.');
    }
    const pad = BigInt(this.manifest.padId ?? 0);
    const ids = new BigInt64Array(rows.length * width).fill(pad);
    const mask = new BigInt64Array(rows.length * width);
    rows.forEach((row, r) => {
      const start = r * width + widthP - row.prompt.length;
      [...row.prompt, ...row.response].forEach((token, i) => {
        ids[start + i] = BigInt(token);
        mask[start + i] = 1n;
      });
    });
    const [idsName, maskName] = this.manifest.inputs;
    const dims = [rows.length, width];
    const outputs = await this.session.run({
      [idsName]: new this.runtime.Tensor('int64', ids, dims),
      [maskName]: new this.runtime.Tensor('int64', mask, dims),
    });
    const logits = outputs[this.manifest.output].data as Float32Array;
    const vocab = this.manifest.vocabSize;
    return rows.map((row, r) => {
      const logprobs: number[] = [];
      const top: Alternative[][] = [];
      row.response.forEach((token, j) => {
        // Column widthP + j holds response token j; the column before it predicts it.
        const logp = logSoftmax(logits, (r * width + widthP + j - 1) * vocab, vocab, temperature);
        logprobs.push(logp[token]);
        top.push(topK(logp, k));
      });
      return { logprobs, top };
    });
  }

  async dispose(): Promise<void> {
    await this.session.release();
  }
}
