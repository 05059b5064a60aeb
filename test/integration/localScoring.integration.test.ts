import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { LocalReplay } from '../../src/scoring/localReplay';
import { TOKENS_SCHEME } from '../../src/debug/tokenTable';
import { EXTENSION_ID } from '../builders/extension';

// "EMPO²: Score Episode Locally (ONNX)" inside a real VS Code (code-server) with no host: a real
// one-iteration run of the tiny built-in policy (EMPO2_TEST_POLICY) and `empo2-host export-onnx`
// of the checkpoint that played it are made by the project's venv beforehand, as on a GPU box;
// the extension then loads onnxruntime-node in VS Code's own extension host, re-scores a recorded
// episode from the run folder alone, and opens its first turn in the token view.

const repoRoot = path.resolve(__dirname, '../../../..');
const python = path.join(repoRoot, '.venv', 'bin', 'python');
const env = {
  ...process.env,
  PYTHONPATH: path.join(repoRoot, 'host'),
  HF_HUB_OFFLINE: '1',
  TRANSFORMERS_OFFLINE: '1',
  EMPO2_NO_PROGRESS: '1',
};

describe('scoring a recorded episode locally with onnxruntime-node', function () {
  this.timeout(900_000);
  let root: string;

  before(async () => {
    await vscode.extensions.getExtension(EXTENSION_ID)!.activate();
    root = mkdtempSync(path.join(os.tmpdir(), 'empo2-local-scoring-'));
  });

  after(() => rmSync(root, { recursive: true, force: true }));

  it('re-scores an episode of a copied run folder and shows its tokens, no host involved', async () => {
    const config = {
      iterations: 1,
      env: { tasks: ['power-device'], max_steps: 3 },
      policy: { model: process.env.EMPO2_TEST_POLICY, max_action_tokens: 6, max_tip_tokens: 12 },
      algo: { batch_tasks: 1, group_size: 2, p_memory: 1.0, q_off_policy: 0.0, minibatches: 1 },
      eval: { every: 0, max_variations: 1 },
    };
    writeFileSync(path.join(root, 'config.json'), JSON.stringify(config));
    const host = (args: string[]) =>
      execFileSync(python, ['-m', 'empo2.cli', ...args], { env, cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'] });
    host([
      'train',
      '--config',
      path.join(root, 'config.json'),
      '--root',
      path.join(root, 'runs'),
      '--name',
      'gpu-box-run',
    ]);
    const run = path.join(root, 'runs', 'gpu-box-run');
    host(['export-onnx', path.join(run, 'checkpoints', 'iter-000000')]);
    const episodeId = 'i000001-e0000';

    const replay = await vscode.commands.executeCommand<LocalReplay | undefined>('empo2.scoreEpisodeLocally', {
      run,
      episodeId,
      turn: 0,
    });
    assert.ok(replay, 'the command scored the episode');
    assert.equal(replay.summary.episodeId, episodeId);
    assert.ok(
      replay.summary.maxLogprobError < 1e-4,
      `largest |re-scored − recorded| log-prob ${replay.summary.maxLogprobError}`,
    );
    const editor = vscode.window.visibleTextEditors.find((e) => e.document.uri.scheme === TOKENS_SCHEME);
    assert.ok(editor, 'the token view is open');
    const text = editor.document.getText();
    assert.match(text, /log p tips/);
    const first = replay.turns[0].tokens[0];
    assert.ok(text.includes(JSON.stringify(first.text)) && text.includes(first.logprob.toFixed(3)), text);
  });
});
