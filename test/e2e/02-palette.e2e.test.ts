import * as assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { e2eSession } from './session';
import { Workbench } from './workbench';

// A person drives EMPO² Studio from the command palette (F1).

const manifest = JSON.parse(readFileSync(path.resolve(__dirname, '../../../../package.json'), 'utf8'));
const hidden = new Set(
  (manifest.contributes.menus.commandPalette ?? [])
    .filter((m: { when: string }) => m.when === 'false')
    .map((m: { command: string }) => m.command),
);
const commands: Array<{ command: string; title: string; category: string }> = manifest.contributes.commands.filter(
  (c: { command: string }) => !hidden.has(c.command),
);
// With no host running, a command whose palette entry has a `when` clause is not offered,
// except Start Host (its clause asks for a stopped host): the palette offers only what applies.
const conditional = new Set(
  (manifest.contributes.menus.commandPalette ?? [])
    .filter((m: { when: string }) => m.when !== 'false')
    .map((m: { command: string }) => m.command),
);
const offeredWithoutHost = commands.filter((c) => !conditional.has(c.command) || c.command === 'empo2.startHost');
const notOfferedWithoutHost = commands.filter((c) => conditional.has(c.command) && c.command !== 'empo2.startHost');

describe('EMPO² commands in the palette', () => {
  const workbench = new Workbench();

  it('lists every EMPO² command that applies without a host, under its category, and no other', async () => {
    const missing: string[] = [];
    for (const { category, title } of offeredWithoutHost) {
      await workbench.openCommandPalette();
      const label = `${category}: ${title}`;
      await workbench.page.keyboard.insertText(label); // at once: typing 28 labels key by key took half a minute
      await workbench
        .paletteRow(label)
        .first()
        .waitFor({ timeout: 5_000 })
        .catch(() => missing.push(label));
    }
    const offered: string[] = [];
    for (const { category, title } of notOfferedWithoutHost) {
      await workbench.openCommandPalette();
      const label = `${category}: ${title}`;
      await workbench.page.keyboard.insertText(label); // at once: typing 28 labels key by key took half a minute
      // The palette answers a text no command matches with "similar commands" from other
      // categories, after its direct matches: once that section shows, the label's row would
      // already be there. Where it does not show, the row is given a second and a half.
      const row = workbench.paletteRow(label).first();
      const shown = await Promise.any([
        row.waitFor({ timeout: 1_500 }).then(() => true),
        workbench
          .quickInputRows()
          .filter({ hasText: 'similar commands' })
          .first()
          .waitFor({ timeout: 1_500 })
          .then(async () => (await row.count()) > 0),
      ]).catch(() => false);
      if (shown) {
        offered.push(label);
      }
    }
    await workbench.closeQuickInput();
    assert.deepEqual(missing, []);
    assert.deepEqual(offered, [], 'Stop Host, Pause Run, Edit Tip … are not offered while no host runs');
  });

  it('shows the host log in the EMPO² Host output channel', async () => {
    await workbench.runCommand('EMPO²: Show Host Log');
    const channel = await workbench.eventually('the Output view to show a channel', () =>
      workbench.page
        .locator('.part.panel select.monaco-select-box')
        .first()
        .evaluate((select: HTMLSelectElement) => select.options[select.selectedIndex]?.text)
        .catch(() => undefined),
    );
    assert.equal(channel, 'EMPO² Host');
    const text = await workbench.eventually('the activation line in the output', async () => {
      const shown = await workbench.panelText();
      return /EMPO² Studio \d+\.\d+\.\d+ is active/.test(shown) ? shown : undefined;
    });
    assert.match(text, /\[info\] EMPO² Studio/);
    await workbench.screenshot('05-host-log');
    await workbench.runCommand('View: Hide Panel');
  });

  it('opens a folder picker for Open Run Folder', async () => {
    await workbench.pickCommand('EMPO²: Open Run Folder');
    // In a browser VS Code's folder picker is a quick input with a path box; it starts in the
    // run root, which the harness created in the workspace.
    await workbench.quickInputTitle().filter({ hasText: 'EMPO²: Open Run Folder' }).waitFor();
    const runRoot = `${e2eSession().workspace}/.empo2/runs/`;
    const startsIn = await workbench
      .eventually(
        'the picker to show the run root',
        async () => {
          const value = await workbench.quickInput().locator('input').first().inputValue();
          return value === runRoot ? value : undefined;
        },
        5_000,
      )
      .catch(async (error: Error) => {
        await workbench.screenshot('06-open-run-folder-picker-wrong-path');
        throw error;
      });
    assert.equal(startsIn, runRoot);
    await workbench.screenshot('06-open-run-folder-picker');
    await workbench.closeQuickInput();
  });

  it('does not offer Edit Tip before a host runs (the command still says why if a keybinding runs it)', async () => {
    await workbench.openCommandPalette();
    await workbench.page.keyboard.type('EMPO²: Edit Tip');
    await workbench.screenshot('07-edit-tip-not-offered-without-host');
    assert.equal(await workbench.paletteRow('EMPO²: Edit Tip').count(), 0);
    await workbench.closeQuickInput();
  });
});
