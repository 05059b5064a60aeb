import * as assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import type { Locator } from 'playwright-core';
import { e2eSession } from './session';
import { Workbench } from './workbench';

// The loop reruns are for, on a run that trains: asked to rerun, the extension says first that
// the run is in the way and offers to pause it; paused, a tip is edited and the update dry-run
// beside the paused run, whose comparison shows the tip text before and after the edit; then
// Restart Host, and the paused run resumes by itself on the new host.

describe('Pausing a training run to rerun its update, then restarting the host', () => {
  const workbench = new Workbench();
  let runId = '';
  let editedText = '';

  /** The row of the run this file trains (its label is the run id). */
  function runRow(): Locator {
    return workbench.treeRow(runId).first();
  }

  async function waitForIcon(row: Locator, icon: string, what: string, timeoutMs = 120_000): Promise<void> {
    await workbench.eventually(
      what,
      async () => ((await row.locator(`.codicon-${icon}`).count()) > 0 ? true : undefined),
      timeoutMs,
    );
  }

  it('says before the first question that the run trains, and pauses it when asked', async () => {
    // Earlier files may have left the host running (Start Host is offered only while it is not).
    if (!(await workbench.statusBarItem('EMPO²: CPU').isVisible())) {
      await workbench.runCommand('EMPO²: Start Host');
      await workbench.statusBarItem('EMPO²: CPU').waitFor({ timeout: 120_000 });
    }
    // A run long enough to be training when the rerun is asked for.
    const configs = path.join(e2eSession().workspace, '.empo2', 'configs');
    const long = { ...JSON.parse(readFileSync(path.join(configs, 'tiny.json'), 'utf8')), iterations: 40 };
    writeFileSync(path.join(configs, 'long.json'), JSON.stringify(long, null, 2) + '\n');
    await workbench.pickCommand('EMPO²: New Training Run');
    await workbench.quickInputRows().filter({ hasText: '.empo2/configs/long.json' }).first().click();
    await workbench.quickInput().waitFor({ state: 'hidden' });
    await workbench.openViewContainer('EMPO²');
    // Earlier files leave finished runs, some expanded: only this run's rows are shown open.
    await workbench.collapseTree();
    const live = workbench
      .treeRow(/^run-/)
      .filter({ has: workbench.page.locator('.codicon-sync, .codicon-loading') })
      .first();
    await live.waitFor({ timeout: 120_000 });
    runId = (await live.locator('.label-name').innerText()).trim();
    await workbench.expandRow(runRow());
    // Its first iteration has episodes: the run trains (a pause now leaves a checkpoint).
    await workbench.treeRow('Iteration 1').first().waitFor({ timeout: 180_000 });

    await workbench.pickCommand('EMPO²: Rerun Off-Policy Update…');
    const dialog = workbench.page.locator('.monaco-dialog-box');
    await dialog.getByText(new RegExp(`${runId} is training iteration \\d+`)).waitFor({ timeout: 30_000 });
    assert.equal(await workbench.quickInputTitle().filter({ hasText: '(1/5)' }).count(), 0, 'no question asked before');
    await dialog.getByRole('button', { name: 'Stop the Run and Rerun' }).waitFor();
    await workbench.screenshot('20-rerun-asks-to-pause-first');
    await dialog.getByRole('button', { name: 'Pause After This Iteration and Rerun' }).click();
    // Once paused, the questions begin; cancelled here, to edit a tip first.
    await workbench
      .quickInputTitle()
      .filter({ hasText: `(1/5): checkpoint of ${runId}` })
      .waitFor({ timeout: 180_000 });
    await workbench.closeQuickInput();
    await waitForIcon(runRow(), 'debug-pause', 'the run to read paused');
  });

  it('dry-runs the update beside the paused run; the comparison shows the edited tip', async () => {
    await runRow().click();
    const tips = await workbench.webviewFrame('empo2-tip-card', 60_000);
    const tipId = await tips.locator('empo2-tip-card').first().getAttribute('data-tip-id');
    const card = tips.locator(`empo2-tip-card[data-tip-id="${tipId}"]`);
    await card.locator('vscode-button', { hasText: 'Edit' }).click();
    editedText = `Open the drawer before the cupboard (edited while paused, ${Date.now()})`;
    await card.locator('vscode-textarea textarea').fill(editedText);
    await card.locator('vscode-button', { hasText: 'Save' }).click();
    await card.locator('[data-testid="tip-text"]', { hasText: editedText }).waitFor({ timeout: 30_000 });

    await workbench.pickCommand('EMPO²: Rerun Off-Policy Update…');
    const keyboard = workbench.page.keyboard;
    await workbench
      .quickInputTitle()
      .filter({ hasText: `(1/5): checkpoint of ${runId}` })
      .waitFor({ timeout: 30_000 });
    await keyboard.press('Enter');
    await workbench.quickInputTitle().filter({ hasText: '(2/5): variations' }).waitFor({ timeout: 30_000 });
    await keyboard.press('Enter'); // the edited variation, picked already
    for (const [step, value] of [
      ['(3/5)', '2'],
      ['(4/5)', '1'],
    ] as const) {
      await workbench.quickInputTitle().filter({ hasText: step }).waitFor({ timeout: 30_000 });
      await workbench.quickInput().locator('input').fill(value);
      await keyboard.press('Enter');
    }
    await workbench.quickInputRows().filter({ hasText: 'Dry run' }).first().waitFor({ timeout: 30_000 });
    await keyboard.type('Dry run');
    await keyboard.press('Enter');
    const view = (await workbench.webviewFrame('empo2-compare-view', 300_000)).locator('empo2-compare-view');
    await view.getByText('dry run: weights unchanged').waitFor({ timeout: 300_000 });
    const edits = view.locator('table[aria-label="tip texts before and after the edit"]');
    await edits.locator('td.tip', { hasText: editedText }).waitFor({ timeout: 30_000 });
    assert.equal(
      await edits
        .locator('td.tip.before')
        .first()
        .innerText()
        .then((text) => text.trim().length > 0),
      true,
      'the text before the edit',
    );
    await workbench.screenshot('21-dry-run-beside-paused-run');
    assert.equal(await workbench.notification(/already trains|cannot|failed/).count(), 0, 'no refusal');
    await workbench.openViewContainer('EMPO²');
    await waitForIcon(runRow(), 'debug-pause', 'the run to stay paused', 10_000);
  });

  it('restarts the host, and the paused run resumes on the new host by itself', async () => {
    await workbench.runCommand('View: Close All Editors');
    await workbench.clearNotifications();
    await workbench.runCommand('EMPO²: Restart Host');
    await workbench.statusBarItem('EMPO²: CPU').waitFor({ timeout: 120_000 });
    await workbench.openViewContainer('EMPO²');
    await waitForIcon(runRow(), 'sync', 'the run to train again', 120_000);
    assert.equal(await workbench.notification(/cannot resume/).count(), 0, 'no failed resume');
    await workbench.screenshot('22-resumed-after-restart');
    // Leave the workbench calm for the files after this one.
    await runRow().click();
    await workbench.runCommand('EMPO²: Stop Run');
    await waitForIcon(runRow(), 'debug-stop', 'the run to stop', 180_000);
  });
});
