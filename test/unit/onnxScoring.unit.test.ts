import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { replayLocally } from '../../src/scoring/localReplay';
import { OnnxPolicy, ScoringError, type ScoreRow } from '../../src/scoring/onnxPolicy';
import {
  episodeRecord,
  episodeSummaries,
  exportedIterations,
  producingExport,
} from '../../src/scoring/runFolderReader';
import { tinyPolicyFolder } from '../builders/tinyPolicy';

// Local scoring against the host: the tiny built-in policy the other tiers train (the built-in
// policy's architecture, a Qwen2ForCausalLM, at its "tiny" size) is exported by the real
// `empo2-host export-onnx`, scored by onnxruntime-node through src/scoring/, and compared with
// PyTorch's scoring pass (generation.sequence_alternatives, the one the host's replay uses) on
// the same rows, and with the behaviour log-probs a real training run recorded. Nothing faked.

const repoRoot = path.resolve(__dirname, '../../../..');
const python = path.join(repoRoot, '.venv', 'bin', 'python');
const env = {
  ...process.env,
  PYTHONPATH: path.join(repoRoot, 'host'),
  HF_HUB_OFFLINE: '1',
  TRANSFORMERS_OFFLINE: '1',
  EMPO2_NO_PROGRESS: '1',
};
const TOLERANCE = 1e-4;

function host(args: string[]): string {
  return execFileSync(python, args, {
    env,
    cwd: repoRoot,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
    maxBuffer: 64 << 20,
  });
}

// Rows of every shape the scorer meets: prompts and responses of different lengths in one batch
// (left and right padding), and a response token that is not the likely one.
const REFERENCE = `
import json, sys, torch
from empo2.policy.generation import sequence_alternatives
from empo2.policy.model import load_policy
model, tok = load_policy(sys.argv[1])
g = torch.Generator().manual_seed(0)
vocab = len(tok)
rows = []
for p_len, r_len in [(5, 1), (31, 6), (12, 3), (2, 4), (48, 2)]:
    rows.append({"prompt": torch.randint(6, vocab, (p_len,), generator=g).tolist(),
                 "response": torch.randint(6, vocab, (r_len,), generator=g).tolist()})
out = {"rows": rows}
for temperature in (1.0, 0.7):
    logp, top_ids, top_logp, mask = sequence_alternatives(model, [r["prompt"] for r in rows],
                                                         [r["response"] for r in rows], 5, temperature, tok.pad_token_id)
    out[str(temperature)] = [{"logp": logp[i, :len(r["response"])].tolist(),
                              "top_ids": top_ids[i, :len(r["response"])].tolist(),
                              "top_logp": top_logp[i, :len(r["response"])].tolist()} for i, r in enumerate(rows)]
print(json.dumps(out))
`;

interface Reference {
  rows: ScoreRow[];
  [temperature: string]: unknown;
}

describe('local scoring with onnxruntime-node (src/scoring/)', function () {
  this.timeout(900_000);
  let policyFolder: string;
  let root: string;
  let exported: OnnxPolicy;

  before(async () => {
    policyFolder = await tinyPolicyFolder();
    root = mkdtempSync(path.join(os.tmpdir(), 'empo2-onnx-'));
    const result = JSON.parse(
      host(['-m', 'empo2.cli', 'export-onnx', policyFolder, '--out', path.join(root, 'policy-onnx')])
        .trim()
        .split('\n')
        .pop()!,
    );
    exported = await OnnxPolicy.load(result.path);
  });

  after(async () => {
    await exported?.dispose();
    rmSync(root, { recursive: true, force: true });
  });

  it('gives PyTorch’s per-token log-probs and top-5 within 1e-4, padded rows and temperatures alike', async () => {
    const reference = JSON.parse(host(['-c', REFERENCE, policyFolder])) as Reference;
    for (const temperature of [1.0, 0.7]) {
      const expected = reference[temperature.toFixed(1)] as {
        logp: number[];
        top_ids: number[][];
        top_logp: number[][];
      }[];
      const scored = await exported.score(reference.rows, temperature);
      let worst = 0;
      scored.forEach((row, r) => {
        assert.equal(row.logprobs.length, reference.rows[r].response.length);
        row.logprobs.forEach((lp, j) => {
          worst = Math.max(worst, Math.abs(lp - expected[r].logp[j]));
          assert.deepEqual(
            row.top[j].map((a) => a.id),
            expected[r].top_ids[j],
            `top-5 ids of row ${r} token ${j} at T=${temperature}`,
          );
          row.top[j].forEach((a, k) => assert.ok(Math.abs(a.logprob - expected[r].top_logp[j][k]) < TOLERANCE));
        });
      });
      assert.ok(worst < TOLERANCE, `largest |onnx − torch| log-prob at T=${temperature}: ${worst}`);
      // The rows are random tokens: most are unlikely, so the comparison is not of zeros.
      assert.ok(scored.flatMap((row) => row.logprobs).some((lp) => lp < -1));
    }
  });

  it('scores a recorded episode of a real run as the run recorded it, from the run folder alone', async () => {
    const config = {
      iterations: 1,
      env: { tasks: ['power-device'], max_steps: 4 },
      policy: { model: policyFolder, max_action_tokens: 6, max_tip_tokens: 12 },
      algo: { batch_tasks: 1, group_size: 2, p_memory: 1.0, q_off_policy: 0.0, minibatches: 1 },
      eval: { every: 0, max_variations: 1 },
    };
    const configFile = path.join(root, 'config.json');
    writeFileSync(configFile, JSON.stringify(config));
    host(['-m', 'empo2.cli', 'train', '--config', configFile, '--root', path.join(root, 'runs'), '--name', 'r']);
    const run = path.join(root, 'runs', 'r');
    // Iteration 1 was played by the checkpoint of iteration 0 (the configured model itself);
    // export-onnx writes it into the run folder by default.
    host(['-m', 'empo2.cli', 'export-onnx', path.join(run, 'checkpoints', 'iter-000000')]);
    assert.deepEqual(exportedIterations(run), [0]);
    const summaries = episodeSummaries(run);
    assert.ok(summaries.length >= 2);
    const folder = producingExport(run, summaries[0].iteration);
    assert.ok(folder, 'the export of the producing checkpoint is found');
    const policy = await OnnxPolicy.load(folder);
    try {
      assert.equal(policy.manifest.temperature, 1.0);
      for (const summary of summaries) {
        const episode = episodeRecord(run, summary.iteration, summary.id);
        const { turns, summary: replay } = await replayLocally(policy, episode, policy.manifest.temperature ?? 1, 'r');
        assert.equal(turns.length, episode.steps.length);
        assert.ok(
          replay.maxLogprobError < TOLERANCE,
          `${episode.id}: largest |onnx − recorded| log-prob ${replay.maxLogprobError}`,
        );
        turns.forEach((turn, t) => {
          assert.deepEqual(
            turn.tokens.map((tok) => tok.id),
            episode.steps[t].action_ids,
          );
          // The word tokenizer decodes ids joined by spaces, special tokens skipped (as the host
          // decodes an action): the tokens spell the recorded action.
          const spelled = turn.tokens
            .map((tok) => tok.text)
            .filter((text) => !/^<\|[^|]*\|>$/.test(text))
            .join(' ');
          assert.ok(
            spelled.startsWith(episode.steps[t].action.toLowerCase()),
            `${JSON.stringify(spelled)} vs ${JSON.stringify(episode.steps[t].action)}`,
          );
          assert.equal(turn.replay?.recordedLogprobs.length, turn.tokens.length);
        });
      }
    } finally {
      await policy.dispose();
    }
  });

  it('says in one sentence what is wrong with a folder that is not an export', async () => {
    await assert.rejects(
      OnnxPolicy.load(root),
      (error: unknown) =>
        error instanceof ScoringError && /is not an ONNX export/.test(error.message) && !error.message.includes('\n'),
    );
  });
});
