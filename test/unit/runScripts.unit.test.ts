import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { chmodSync, copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { withCurrentRun } from '../../src/debug/launchConfig';

// What ./scripts/run.sh does before VS Code opens, run on scratch folders: the package is
// rebuilt only when its sources changed, and VS Code opens a workspace of the product's own.

const root = path.resolve(__dirname, '../../../..');
const manifest = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8'));

/** A scratch clone holding `script` (copied from this repository) and `files`. */
function scratch(script: string, files: Record<string, string> = {}): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'empo2-scripts-'));
  mkdirSync(path.join(dir, 'scripts'));
  copyFileSync(path.join(root, 'scripts', script), path.join(dir, 'scripts', script));
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
    writeFileSync(path.join(dir, name), text);
  }
  return dir;
}

describe('scripts/build-vsix.sh', () => {
  let dir = '';
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('builds the package only when a file it is built from changed', () => {
    dir = scratch('build-vsix.sh', {
      'package.json': '{}',
      'src/extension.ts': 'export {};\n',
      'docs/notes.md': 'not shipped\n',
    });
    // npm, as the script calls it: records the call and writes the package.
    const bin = path.join(dir, 'bin');
    mkdirSync(bin);
    writeFileSync(
      path.join(bin, 'npm'),
      '#!/usr/bin/env bash\necho "$*" >>"$(dirname "$0")/calls"\nmkdir -p out && echo vsix >out/empo2-studio.vsix\n',
    );
    chmodSync(path.join(bin, 'npm'), 0o755);
    const build = () =>
      execFileSync('bash', [path.join(dir, 'scripts', 'build-vsix.sh')], {
        env: { ...process.env, PATH: `${bin}:${process.env.PATH}` },
        stdio: ['ignore', 'pipe', 'ignore'],
      })
        .toString()
        .trim();
    const calls = () => readFileSync(path.join(bin, 'calls'), 'utf8').trim().split('\n').length;

    const first = build();
    assert.match(first, /^[0-9a-f]{64}$/);
    assert.equal(calls(), 1);
    assert.equal(build(), first, 'nothing changed: the same digest');
    assert.equal(calls(), 1, 'and no second build');
    writeFileSync(path.join(dir, 'docs', 'notes.md'), 'still not shipped\n');
    build();
    assert.equal(calls(), 1, 'a file the package does not hold changes nothing');
    writeFileSync(path.join(dir, 'src', 'extension.ts'), 'export const changed = 1;\n');
    assert.notEqual(build(), first);
    assert.equal(calls(), 2, 'a source changed: built again');
    rmSync(path.join(dir, 'out', 'empo2-studio.vsix'));
    build();
    assert.equal(calls(), 3, 'the package is gone: built again');
  });
});

describe('scripts/run-workspace.sh', () => {
  let dir = '';
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('makes a workspace of its own under .empo2 whose F5 plays an episode of the current run', () => {
    dir = scratch('run-workspace.sh');
    const printed = execFileSync('bash', [path.join(dir, 'scripts', 'run-workspace.sh'), dir])
      .toString()
      .trim();
    assert.equal(printed, path.join(dir, '.empo2', 'workspace'));
    const launch = JSON.parse(readFileSync(path.join(printed, '.vscode', 'launch.json'), 'utf8')) as {
      configurations: Array<Record<string, unknown> & { type: string }>;
    };
    const debuggerType = manifest.contributes.debuggers.find((d: { type: string }) => d.type === 'empo2');
    const declared = new Set([
      'type',
      'request',
      'name',
      ...Object.keys(debuggerType.configurationAttributes.launch.properties),
    ]);
    assert.equal(launch.configurations.length, 1);
    const [configuration] = launch.configurations;
    assert.equal(configuration.type, 'empo2');
    assert.equal(configuration.request, 'launch');
    for (const key of Object.keys(configuration)) {
      assert.ok(declared.has(key), `${key} is a declared launch attribute`);
    }
    assert.deepEqual(
      withCurrentRun(configuration, 'builtin-1'),
      { ...configuration, runId: 'builtin-1' },
      'it names no run: the current one plays',
    );
    assert.equal(withCurrentRun(configuration, undefined), undefined);
    const settings = JSON.parse(readFileSync(path.join(printed, '.vscode', 'settings.json'), 'utf8')) as Record<
      string,
      string
    >;
    assert.equal(
      path.resolve(printed, settings['empo2.runRoot']),
      path.join(dir, '.empo2', 'runs'),
      "the runs stay in the repository's .empo2/runs",
    );
  });

  it('leaves a launch.json a person changed as it is', () => {
    dir = scratch('run-workspace.sh', { '.empo2/workspace/.vscode/launch.json': '{ "mine": true }\n' });
    execFileSync('bash', [path.join(dir, 'scripts', 'run-workspace.sh'), dir]);
    assert.equal(
      readFileSync(path.join(dir, '.empo2', 'workspace', '.vscode', 'launch.json'), 'utf8'),
      '{ "mine": true }\n',
    );
  });

  it('is what run.sh opens, not the repository', () => {
    const script = readFileSync(path.join(root, 'scripts', 'run.sh'), 'utf8');
    assert.match(script, /workspace="\$\(bash scripts\/run-workspace\.sh "\$root"\)"/);
    assert.match(script, /exec bash scripts\/vscode-open\.sh --train "\$run" "\$workspace"/);
  });
});

describe('an empo2 launch that names no policy', () => {
  it('plays with the current run; one naming a run, a policy or a replay is left as it is', () => {
    const named = { type: 'empo2', runId: 'r1' };
    assert.equal(withCurrentRun(named, 'r2'), named);
    const policy = { type: 'empo2', policyPath: 'builtin' };
    assert.equal(withCurrentRun(policy, 'r2'), policy);
    const replay = { type: 'empo2', replay: { runId: 'r1', episodeId: 'i000001-e0000' } };
    assert.equal(withCurrentRun(replay, undefined), replay);
  });
});
