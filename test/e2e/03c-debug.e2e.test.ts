import * as assert from 'node:assert/strict';
import { Workbench } from './workbench';

// Debugging one recorded episode in VS Code's own debugger, as a person does it, on the run
// 03-training trained: "Debug Episode…" from the episode's context menu in the tree replays it
// (stopped on entry, Run and Debug open, its document open, one line per turn), a breakpoint set
// in the document's gutter with F9, F5 runs to it, and the Variables view shows that turn; a
// retrieved tip would offer "Show Tip in Memory Tips" there (unit-tested: this replay is
// memory-free).

describe("Debugging an episode in VS Code's debugger, as a person does it", function () {
  this.timeout(600_000); // loading the checkpoint and replaying takes minutes on a loaded machine
  const workbench = new Workbench();

  it('replays an episode from the tree, runs to a gutter breakpoint, and shows the turn in Variables', async () => {
    const page = workbench.page;
    await workbench.runCommand('View: Close All Editors');
    await workbench.openViewContainer('EMPO²');
    await workbench.expandRow(workbench.treeRow('Iteration 1').first());
    const group = workbench.treeRow(/^(power-device|grow-plant)\//).first();
    await workbench.expandRow(group);
    await workbench.treeRow('Episode 0000').first().click({ button: 'right' });
    // VS Code's context menu ignores a click that comes too soon after it opened (so that the
    // right button's release does not pick an item): hover first, as a hand does, and if the
    // menu is still open after the click, choose the hovered item with Enter.
    const item = page.getByRole('menuitem', { name: 'Debug Episode…' });
    await item.hover();
    await page.waitForTimeout(300);
    await item.click();
    await page.waitForTimeout(2_000);
    if (await item.isVisible().catch(() => false)) {
      await page.keyboard.press('Enter');
    }

    // Stopped on entry: the debug toolbar, Run and Debug open in the side bar (VS Code itself
    // opens it only on a breakpoint), and the episode's document with a line per turn.
    await page.locator('.debug-toolbar').waitFor({ timeout: 300_000 });
    const pane = (title: string) =>
      page.locator('.part.sidebar .pane').filter({ has: page.locator('.pane-header', { hasText: title }) });
    await pane('Call Stack').waitFor({ timeout: 30_000 });
    await workbench.screenshot('20a-debug-stopped-on-entry');
    await page.locator('.tabs-container .tab', { hasText: '.empo2-episode' }).waitFor({ timeout: 60_000 });
    const editor = page.locator('.editor-instance .monaco-editor').first();
    const line2 = editor.locator('.view-line').nth(1);
    await line2.waitFor();
    assert.match(await line2.innerText(), /^turn\s1:\s/); // Monaco renders spaces as no-break spaces

    // A breakpoint on turn 1, in the gutter, the way one is set in any file.
    await line2.click();
    await page.keyboard.press('F9');
    await editor
      .locator('.codicon-debug-breakpoint, .codicon-debug-breakpoint-unverified')
      .first()
      .waitFor({ timeout: 30_000 });
    await page.keyboard.press('F5');

    // Stopped there: the call stack's top frame is turn 1, and the Variables view shows it.
    await pane('Call Stack')
      .locator('.monaco-list-row', { hasText: /turn\s1:\s/ })
      .first()
      .waitFor({ timeout: 300_000 });
    const variables = pane('Variables');
    const turnScope = variables.locator('.monaco-list-row', { hasText: 'Turn' }).first();
    await turnScope.waitFor({ timeout: 60_000 });
    if ((await turnScope.getAttribute('aria-expanded')) !== 'true') {
      await turnScope.click(); // a person opens the scope, as in any debugger
    }
    for (const name of ['observation', 'prompt_no_tips', 'tips_retrieved', 'executed_action', 'corrected']) {
      // the rows in view (the list is virtual)
      await variables.locator('.monaco-list-row', { hasText: name }).first().waitFor({ timeout: 30_000 });
    }
    // The turn it stopped on, as the Variables view shows it: "turn = 1".
    await variables
      .locator('.monaco-list-row', { hasText: /^\s*turn\s*[=:]?\s*1\s*$/ })
      .first()
      .waitFor({ timeout: 30_000 });
    await workbench.screenshot('20-debug-breakpoint-variables');
    await page.keyboard.press('Shift+F5');
    await page.locator('.debug-toolbar').waitFor({ state: 'hidden', timeout: 60_000 });
  });
});
