import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as path from 'node:path';
import type { Frame, Locator } from 'playwright-core';
import { e2eSession } from './session';
import { Workbench } from './workbench';

// A researcher who trained a run with report_to=tensorboard opens it in TensorBoard from the
// run's context menu: TensorBoard starts from the project's venv and its page, with the run's
// scalars, shows in VS Code's Simple Browser. A run without the mirror says how to get one.

describe('Open in TensorBoard, as a person does it', function () {
  this.timeout(900_000);
  const workbench = new Workbench();
  const runId = 'tensorboard-mirrored';

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

  /** The frame of TensorBoard's own page inside the Simple Browser, once it charts a run's scalars. */
  async function tensorBoardFrame(): Promise<Frame> {
    try {
      return await workbench.eventually(
        "TensorBoard's page in the Simple Browser",
        async () => {
          for (const frame of workbench.page.frames()) {
            // TensorBoard's own page (served through code-server's proxy), its charts drawn.
            if (
              (await frame
                .getByText('TIME SERIES', { exact: false })
                .count()
                .catch(() => 0)) > 0 &&
              (await frame
                .getByText('by_env_steps/env_steps')
                .count()
                .catch(() => 0)) > 0
            ) {
              return frame;
            }
          }
          return undefined;
        },
        120_000,
      );
    } catch (error) {
      throw new Error(
        `${(error as Error).message}; the page's frames: ${JSON.stringify(workbench.page.frames().map((frame) => frame.url()))}`,
        { cause: error },
      );
    }
  }

  it('trains a run mirrored to TensorBoard from a terminal and opens it in the Simple Browser', async () => {
    const { fixtures } = e2eSession();
    execFileSync(
      fixtures.python,
      [
        '-m',
        'empo2.cli',
        'train',
        '--config',
        fixtures.configFile,
        '--root',
        fixtures.runRoot,
        '--name',
        runId,
        'report_to=tensorboard',
        'iterations=3',
      ],
      {
        env: { ...process.env, HF_HUB_OFFLINE: '1', TRANSFORMERS_OFFLINE: '1', EMPO2_NO_PROGRESS: '1' },
        timeout: 600_000,
        stdio: 'ignore',
      },
    );
    if (!(await workbench.statusBarItem('EMPO²: CPU').isVisible())) {
      // The files before this one leave the window's host stopped, or lost behind a cut link:
      // Start Host is offered in the first case, Restart Host in the second.
      await workbench.runCommand('EMPO²: Start Host').catch(() => workbench.runCommand('EMPO²: Restart Host'));
      await workbench.statusBarItem('EMPO²: CPU').waitFor({ timeout: 120_000 });
    }
    await workbench.openViewContainer('EMPO²');
    await workbench.runCommand('EMPO²: Refresh');
    const row = await workbench.waitForTreeRow(runId, 60_000);
    await chooseFromContextMenu(row, 'Open in TensorBoard');
    await workbench
      .editorTab(/Simple Browser/)
      .first()
      .waitFor({ timeout: 120_000 });
    const frame = await tensorBoardFrame();
    assert.ok(frame.url().length > 0);
    await workbench.page.waitForTimeout(3_000); // the charts draw after the tags
    await workbench.screenshot('50-tensorboard');
    await workbench.runCommand('View: Close All Editors');
  });

  it('says in one sentence that a run without the mirror needs report_to=tensorboard', async () => {
    const { fixtures } = e2eSession();
    const other = path.basename(fixtures.metricsRun);
    const row = await workbench.waitForTreeRow(other, 60_000);
    await chooseFromContextMenu(row, 'Open in TensorBoard');
    await workbench.notification(`run ${other} mirrors to no TensorBoard`).first().waitFor({ timeout: 30_000 });
    assert.match(
      await workbench.notification('mirrors to no TensorBoard').first().innerText(),
      /train with report_to=tensorboard/,
    );
    await workbench.clearNotifications();
  });
});
