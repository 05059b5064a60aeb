import * as assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import type { Locator } from 'playwright-core';
import { e2eSession } from './session';
import { Workbench } from './workbench';

// A person pauses the only run, then asks for a New Training Run: the extension says the paused
// run is in the way and that stopping it (not pausing) clears it, stops it when asked, and goes on
// to the pick, which lists run configurations only (no bench probe that shares their name). The
// paused run's context menu offers Stop Run too.

describe('A new training run while the only run is paused', () => {
  const workbench = new Workbench();
  let runId = '';

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

  /** The items of the context menu a right-click on `row` opens (closed again with Escape). */
  async function contextMenuItems(row: Locator): Promise<string[]> {
    await row.click({ button: 'right' });
    const items = workbench.page.getByRole('menuitem');
    await items.first().waitFor({ timeout: 10_000 });
    const labels = (await items.allInnerTexts()).map((text) => text.trim());
    await workbench.page.keyboard.press('Escape');
    return labels;
  }

  /** Picks a context menu item as a hand does (VS Code ignores a click right after it opened). */
  async function chooseFromContextMenu(row: Locator, name: string): Promise<void> {
    await row.click({ button: 'right' });
    const item = workbench.page.getByRole('menuitem', { name });
    await item.hover();
    await workbench.page.waitForTimeout(300);
    await item.click();
    await workbench.page.waitForTimeout(1_000);
    if (await item.isVisible().catch(() => false)) {
      await workbench.page.keyboard.press('Enter');
    }
  }

  it('lists run configurations only, then trains the picked one', async () => {
    if (!(await workbench.statusBarItem('EMPO²: CPU').isVisible())) {
      await workbench.runCommand('EMPO²: Start Host');
      await workbench.statusBarItem('EMPO²: CPU').waitFor({ timeout: 120_000 });
    }
    const workspace = e2eSession().workspace;
    const configs = path.join(workspace, '.empo2', 'configs');
    const long = { ...JSON.parse(readFileSync(path.join(configs, 'tiny.json'), 'utf8')), iterations: 40 };
    writeFileSync(path.join(configs, 'paused-long.json'), JSON.stringify(long, null, 2) + '\n');
    // What a bench leaves: probe outputs named like configs, in docs/bench and elsewhere.
    const probe = {
      run: 'empo2-per-episode-key-seed50',
      iterations: 100,
      episodes: 798,
      keys: { step: { entries: 3006 } },
    };
    for (const folder of [path.join(workspace, 'docs', 'bench', 'r2', 'probes'), path.join(workspace, 'results')]) {
      mkdirSync(folder, { recursive: true });
      writeFileSync(path.join(folder, 'empo2-seed50.selectivity.json'), JSON.stringify(probe) + '\n');
    }

    await workbench.pickCommand('EMPO²: New Training Run');
    await workbench
      .quickInputRows()
      .filter({ hasText: '.empo2/configs/paused-long.json' })
      .first()
      .waitFor({ timeout: 30_000 });
    const rows = (await workbench.quickInputRows().allInnerTexts()).join('\n');
    assert.doesNotMatch(rows, /selectivity/, 'no bench probe offered as a config');
    assert.match(rows, /\.empo2\/configs\/tiny\.json/);
    await workbench.quickInputRows().filter({ hasText: '.empo2/configs/paused-long.json' }).first().click();
    await workbench.quickInput().waitFor({ state: 'hidden' });
    await workbench.openViewContainer('EMPO²');
    await workbench.collapseTree();
    // A config file is sent as its content: the host names the run `run-<time>`.
    const live = workbench
      .treeRow(/^run-/)
      .filter({ has: workbench.page.locator('.codicon-sync, .codicon-loading') })
      .first();
    await live.waitFor({ timeout: 120_000 });
    runId = (await live.locator('.label-name').innerText()).trim();
  });

  it("opens Add Tip's form in view when the tips list is scrolled down", async () => {
    const frame = await workbench.webviewFrame('empo2-tips-panel', 60_000);
    // The run writes a tip per episode: wait until the list is longer than the view.
    await workbench.eventually(
      'a tips list longer than its view',
      async () =>
        (await frame.evaluate(() => document.documentElement.scrollHeight > window.innerHeight + 300))
          ? true
          : undefined,
      300_000,
    );
    await frame.evaluate(() => window.scrollTo(0, document.documentElement.scrollHeight));
    assert.ok((await frame.evaluate(() => window.scrollY)) > 0, 'scrolled down');
    const panel = frame.locator('empo2-tips-panel');
    await panel.locator('header vscode-button', { hasText: 'Add Tip' }).click();
    const box = panel.locator('vscode-textarea.add-text');
    await box.waitFor();
    await workbench.eventually(
      'the form in view',
      async () => {
        const inView = await box.evaluate((element) => {
          const rect = element.getBoundingClientRect();
          const header = (element.getRootNode() as ShadowRoot).querySelector('header')!.getBoundingClientRect();
          return rect.top >= header.bottom - 1 && rect.bottom <= window.innerHeight;
        });
        return inView ? true : undefined;
      },
      5_000,
    );
    await workbench.screenshot('24-add-tip-form-in-view');
    await panel.locator('header vscode-button', { hasText: 'Cancel' }).click();
  });

  it("pauses from the run's context menu, which then offers Stop Run", async () => {
    await chooseFromContextMenu(runRow(), 'Pause Run');
    // Paused, not pausing: the row's description is its state.
    await workbench.eventually(
      'the run to read paused',
      async () =>
        /^paused/.test(
          (
            await runRow()
              .locator('.label-description')
              .innerText()
              .catch(() => '')
          ).trim(),
        )
          ? true
          : undefined,
      300_000,
    );
    const items = await contextMenuItems(runRow());
    assert.ok(items.includes('Stop Run'), `Stop Run among ${items.join(', ')}`);
    assert.ok(items.includes('Resume Run'));
  });

  it('says to stop the paused run, stops it when asked, and goes on to the pick', async () => {
    await workbench.clearNotifications();
    await workbench.pickCommand('EMPO²: New Training Run');
    const dialog = workbench.page.locator('.monaco-dialog-box');
    await dialog.getByText(`${runId} is paused. The host trains one run at a time`).waitFor({ timeout: 30_000 });
    assert.doesNotMatch(await dialog.innerText(), /pause or stop|pause it first/);
    await workbench.screenshot('23-new-run-asks-to-stop-paused-run');
    await dialog.getByRole('button', { name: 'Stop It and Start a New Run' }).click();
    await workbench.quickInputTitle().filter({ hasText: 'EMPO²: New Training Run' }).waitFor({ timeout: 120_000 });
    await waitForIcon(runRow(), 'debug-stop', 'the paused run to stop', 10_000);
    await workbench.quickInputRows().filter({ hasText: '.empo2/configs/tiny.json' }).first().click();
    await workbench.quickInput().waitFor({ state: 'hidden' });
    const started = workbench
      .treeRow(/^run-/)
      .filter({ hasNot: workbench.page.getByText(runId, { exact: true }) })
      .filter({ has: workbench.page.locator('.codicon-sync, .codicon-loading') });
    await started.first().waitFor({ timeout: 120_000 });
    assert.equal(await workbench.notification(/already trains|training slot/).count(), 0, 'no refusal');
    // Leave the workbench calm for the files after this one.
    await workbench.eventually(
      'the new run to end',
      async () =>
        (await workbench.treeRow(/^run-/).locator('.codicon-sync, .codicon-loading').count()) === 0 ? true : undefined,
      300_000,
    );
  });
});
