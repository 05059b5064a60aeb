import * as assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as vscode from 'vscode';
import { Requests } from '../../src/rpc/methods';
import type { RerunResult, RunInfo } from '../../src/rpc/protocol';
import type { TreeElement } from '../../src/trajectories/trajectoryTreeProvider';
import { api, EXTENSION_ID } from '../builders/extension';
import { eventually as waitFor } from '../builders/wait';

// Edit a tip, dry-run the update, rerun it on a branch, compare, adopt and delete the branch,
// through the extension's own commands against the real host and the tiny policy, inside a real
// VS Code. The quick picks are skipped by passing the full request (as a script would).

/** Training and rerunning on two cores: two minutes unless said otherwise. */
function eventually<T>(
  what: string,
  probe: () => T | undefined | false | Promise<T | undefined | false>,
  timeoutMs = 120_000,
): Promise<T> {
  return waitFor(what, probe, timeoutMs, 250);
}

async function children(element?: TreeElement): Promise<TreeElement[]> {
  return api().trajectories.getChildren(element);
}

describe('Rerun of the off-policy update from the editor', function () {
  this.timeout(600_000);
  let parent: RunInfo;

  before(async () => {
    await vscode.extensions.getExtension(EXTENSION_ID)!.activate();
    await vscode.commands.executeCommand('empo2.startHost');
    const config = JSON.parse(readFileSync(process.env.EMPO2_TEST_CONFIG!, 'utf8'));
    parent = (await vscode.commands.executeCommand<RunInfo>('empo2.newRun', { config }))!;
    await eventually(
      'the parent run to finish',
      () => api().runs.get(parent.runId)?.info.state === 'finished',
      400_000,
    );
  });

  after(async () => {
    await vscode.commands.executeCommand('empo2.stopHost');
  });

  it('edits a tip, dry-runs the update and shows its loss without touching the run', async () => {
    const { items } = await api().host.request(Requests.memoryList, { runId: parent.runId, limit: 1 });
    await api().host.request(Requests.memoryUpdate, {
      runId: parent.runId,
      tipId: items[0].id,
      text: 'the battery was in the drawer in the kitchen . it worked . score 100',
      expectedVersion: items[0].version,
    });
    const record = await vscode.commands.executeCommand<RerunResult>('empo2.rerunUpdate', {
      runId: parent.runId,
      episodes: 2,
      iterations: 1,
      evalEpisodes: 1,
      dryRun: true,
    });
    assert.ok(record?.dry_run && typeof record.loss === 'number');
    assert.deepEqual(record.variations, [items[0].variationKey]);
    const shown = api().comparison.shown!;
    assert.ok(shown.dryRun && shown.facts.some(([name]) => name === 'loss (no step taken)'));
  });

  it('reruns on a branch that appears under its parent, and compares before and after', async () => {
    const record = await vscode.commands.executeCommand<RerunResult>('empo2.rerunUpdate', {
      runId: parent.runId,
      episodes: 2,
      iterations: 1,
      evalEpisodes: 1,
      dryRun: false,
      name: 'what-if',
    });
    assert.ok(record && !record.dry_run);
    assert.equal(record.status, 'finished');
    const shown = api().comparison.shown!;
    assert.equal(shown.rows.length, 1);
    assert.ok(shown.rows[0].after !== null && shown.tips[0].after);
    await api().runs.reload();
    const parentNode = await eventually('the parent in the tree', async () =>
      (await children()).find((n) => n.kind === 'run' && n.runId === parent.runId),
    );
    assert.ok(
      !(await children()).some((n) => n.kind === 'run' && n.runId === 'what-if'),
      'the branch is not at the top level',
    );
    const branchNode = (await children(parentNode)).find((n) => n.kind === 'run' && n.runId === 'what-if');
    assert.ok(branchNode, 'the branch sits under its parent');
    assert.match(String(api().trajectories.getTreeItem(branchNode!).contextValue), /\.branch$/);
    const compared = await vscode.commands.executeCommand<RerunResult>('empo2.compareWithParent', { runId: 'what-if' });
    assert.ok(compared && !compared.dry_run);
    assert.deepEqual(compared.comparison, record.comparison);
  });

  it('adopts the branch, then deletes it (the parent stays)', async () => {
    assert.equal(await vscode.commands.executeCommand('empo2.adoptBranch', { runId: 'what-if' }), true);
    assert.equal(api().runs.get('what-if')?.info.parent?.adopted, true);
    assert.equal(
      await vscode.commands.executeCommand('empo2.deleteBranch', { runId: 'what-if', confirmed: true }),
      true,
    );
    assert.equal(api().runs.get('what-if'), undefined);
    assert.ok(api().runs.get(parent.runId));
  });
});
