import * as assert from 'node:assert/strict';
import * as vscode from 'vscode';
import { eventually } from '../builders/wait';
import { EXTENSION_ID } from '../builders/extension';

// Runs inside a real VS Code extension host, with the full vscode API.

function extension(): vscode.Extension<unknown> {
  const found = vscode.extensions.getExtension(EXTENSION_ID);
  assert.ok(found, `${EXTENSION_ID} is installed in this VS Code`);
  return found;
}

describe('EMPO² Studio in a real VS Code', () => {
  before(async () => {
    await extension().activate();
  });

  it('activates', () => {
    assert.equal(extension().isActive, true);
  });

  it('registers every command its package.json contributes', async () => {
    const contributed: string[] = extension().packageJSON.contributes.commands.map(
      (c: { command: string }) => c.command,
    );
    // Which commands are contributed is pinned by test/unit/manifest.unit.test.ts; here: each is registered.
    assert.ok(contributed.length >= 20, `only ${contributed.length} commands contributed`);
    const registered = new Set(await vscode.commands.getCommands(true));
    const missing = contributed.filter((id) => !registered.has(id));
    assert.deepEqual(missing, [], 'contributed but not registered');
  });

  it('registers no empo2 command it does not contribute', async () => {
    const contributed = new Set<string>(
      extension().packageJSON.contributes.commands.map((c: { command: string }) => c.command),
    );
    // VS Code adds <view>.focus, <view>.resetViewLocation and similar for every contributed view.
    const generated = /^empo2\.(trajectories|tips)\.|^workbench\.view\.extension\.empo2/;
    const extra = (await vscode.commands.getCommands(true)).filter(
      (id) => id.startsWith('empo2.') && !contributed.has(id) && !generated.test(id),
    );
    assert.deepEqual(extra, []);
  });

  it('shows the EMPO² container with its Trajectories and Memory Tips views', async () => {
    const registered = new Set(await vscode.commands.getCommands(true));
    for (const view of ['empo2.trajectories', 'empo2.tips']) {
      assert.ok(registered.has(`${view}.focus`), `view ${view} exists`);
    }
    await vscode.commands.executeCommand('workbench.view.extension.empo2');
    await vscode.commands.executeCommand('empo2.trajectories.focus');
    await vscode.commands.executeCommand('empo2.tips.focus');
  });

  it('opens the "EMPO² Host" output channel with showHostLog', async () => {
    await vscode.commands.executeCommand('empo2.showHostLog');
    const document = await eventually('the EMPO² Host output to be open', () =>
      vscode.workspace.textDocuments.find((doc) => doc.uri.scheme === 'output' && doc.uri.path.includes('EMPO')),
    );
    const text = await eventually('the activation line in the host log', () =>
      document.getText().includes('EMPO² Studio') ? document.getText() : undefined,
    );
    assert.match(text, /EMPO² Studio \d+\.\d+\.\d+ is active/);
  });

  it('refreshes the trajectory tree without error', async () => {
    await vscode.commands.executeCommand('empo2.refresh');
  });

  it('reads its settings with their defaults', () => {
    const config = vscode.workspace.getConfiguration('empo2');
    assert.equal(config.get('pythonPath'), '');
    assert.deepEqual(config.get('hostArgs'), []);
    assert.equal(config.get('remoteUrl'), '');
    assert.equal(config.get('autoStart'), false);
    assert.equal(config.get('autoStartRun'), '');
    assert.equal(config.get('runRoot'), '.empo2/runs');
  });
});
