import * as assert from 'node:assert/strict';
import type { Frame } from 'playwright-core';
import { Workbench } from './workbench';

// The loop the product is named for, as a person does it, right after 03-training (whose run
// has finished): a tip edited in the Memory Tips view, then the rerun of the off-policy update
// from the palette, answered by keyboard alone — a dry run first (its loss, nothing changed), then for real on a
// branch that appears under its parent, and the comparison view with before and after numbers.

describe('Rerunning the off-policy update after a tip edit, as a person does it', () => {
  const workbench = new Workbench();
  let parent = '';
  let editedText = '';

  /** Answers the rerun's quick picks by keyboard: latest checkpoint, the edited variations, N, K, the mode. */
  async function rerunFromPalette(mode: 'Dry run' | 'Rerun on a new branch'): Promise<void> {
    await workbench.pickCommand('EMPO²: Rerun Off-Policy Update…');
    const keyboard = workbench.page.keyboard;
    await workbench
      .quickInputTitle()
      .filter({ hasText: `(1/5): checkpoint of ${parent}` })
      .waitFor({ timeout: 30_000 });
    await workbench.quickInputRows().first().filter({ hasText: 'latest' }).waitFor();
    await keyboard.press('Enter');
    await workbench.quickInputTitle().filter({ hasText: '(2/5): variations' }).waitFor({ timeout: 30_000 });
    // The variation whose tip was edited by hand is offered as such, and picked already.
    const edited = workbench.quickInputRows().filter({ hasText: 'tips edited by a person' });
    assert.ok((await edited.count()) >= 1, 'the edited variation is marked');
    assert.equal(
      await edited.first().locator('input[type="checkbox"]:checked, .monaco-custom-toggle.checked').count(),
      1,
      'and picked',
    );
    await keyboard.press('Enter');
    for (const [step, value] of [
      ['(3/5)', '2'],
      ['(4/5)', '1'],
    ] as const) {
      await workbench.quickInputTitle().filter({ hasText: step }).waitFor({ timeout: 30_000 });
      await workbench.quickInput().locator('input').fill(value);
      await keyboard.press('Enter');
    }
    await workbench.quickInputRows().filter({ hasText: 'Dry run' }).first().waitFor({ timeout: 30_000 });
    await keyboard.type(mode);
    await keyboard.press('Enter');
    await workbench.quickInput().waitFor({ state: 'hidden' });
  }

  async function compareFrame(): Promise<Frame> {
    return workbench.webviewFrame('empo2-compare-view', 300_000);
  }

  it('dry-runs the update from the palette: the loss is shown, and no branch is made', async () => {
    await workbench.openViewContainer('EMPO²');
    const row = workbench.treeRow(/^run-/).filter({ hasText: 'finished' }).first();
    await row.waitFor({ timeout: 240_000 });
    parent = (await row.locator('.label-name').innerText()).trim();
    await row.click(); // the run the commands act on
    // The edit the rerun is about, made after the run's last checkpoint, in the Memory Tips view.
    const tips = await workbench.webviewFrame('empo2-tip-card', 60_000);
    const tipId = await tips.locator('empo2-tip-card').first().getAttribute('data-tip-id');
    const card = tips.locator(`empo2-tip-card[data-tip-id="${tipId}"]`);
    await card.locator('vscode-button', { hasText: 'Edit' }).click();
    editedText = `Go to the greenhouse first, then look around (edited before a rerun, ${Date.now()})`;
    await card.locator('vscode-textarea textarea').fill(editedText);
    await card.locator('vscode-button', { hasText: 'Save' }).click();
    await card.locator('[data-testid="tip-text"]', { hasText: editedText }).waitFor({ timeout: 30_000 });
    await rerunFromPalette('Dry run');
    const view = (await compareFrame()).locator('empo2-compare-view');
    await view.getByText('dry run: weights unchanged').waitFor({ timeout: 300_000 });
    await view.getByText(`Dry run of ${parent}`).waitFor();
    await view.getByText('loss (no step taken)').waitFor();
    await workbench.screenshot('18-rerun-dry-run');
    assert.equal(
      await workbench
        .treeRow(/^branch-\d+$/)
        .filter({ hasText: `branch of ${parent}` })
        .count(),
      0,
      'a dry run makes no branch',
    );
  });

  it('reruns for real on a branch under its parent; the comparison shows before and after', async () => {
    await workbench.runCommand('View: Close All Editors');
    await rerunFromPalette('Rerun on a new branch');
    const view = (await compareFrame()).locator('empo2-compare-view');
    await view.locator('h2', { hasText: `vs ${parent}` }).waitFor({ timeout: 300_000 });
    const table = view.locator('table[aria-label="memory-free success before and after"]');
    const cells = table.locator('tbody tr').first().locator('td.number');
    assert.equal(await cells.count(), 3, 'before, after and change');
    for (const text of await cells.allInnerTexts()) {
      // A change comes with its 95% interval and the episodes each side played.
      assert.match(
        text.trim(),
        /^(\d+(\.\d)?%|[+−±]\d+(\.\d)? pts \[(0|[+−]\d+), (0|[+−]\d+)\] · \d+ vs \d+ episodes)$/,
        `a success or a change, not "${text}"`,
      );
    }
    // The edited tip, before and after, as the branch recorded it.
    await view
      .locator('table[aria-label="tip texts before and after the edit"] td.tip', { hasText: editedText })
      .waitFor({ timeout: 30_000 });
    await workbench.screenshot('19-rerun-compared');
    await workbench.openViewContainer('EMPO²');
    await workbench.expandRow(workbench.treeRow(parent).first());
    // Under its parent a branch is named by what its id adds to the parent's ("branch-1").
    const branch = workbench
      .treeRow(/^branch-\d+$/)
      .filter({ hasText: `branch of ${parent}` })
      .first();
    await branch.waitFor({ timeout: 30_000 });
    // Its rerun finished: the branch reads finished, with the finished icon, not a red stop.
    await workbench.eventually(
      'the branch to read finished',
      async () => ((await branch.locator('.codicon-pass-filled').count()) === 1 ? true : undefined),
      30_000,
    );
    assert.equal(await branch.locator('.codicon-debug-stop').count(), 0, 'no stop icon on a finished branch');
    assert.match(await branch.locator('.label-description').innerText(), /finished/);
    await workbench.screenshot('19b-branch-under-parent');
  });
});
