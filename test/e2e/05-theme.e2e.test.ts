import * as assert from 'node:assert/strict';
import { Workbench } from './workbench';

// A person switches VS Code to a dark theme; the webviews follow without a reload.

describe('EMPO² views in a dark theme', () => {
  const workbench = new Workbench();

  async function tipsPanelColours(): Promise<{ text: string; background: string }> {
    const frame = await workbench.webviewFrame('empo2-tips-panel');
    return frame.locator('empo2-tips-panel').evaluate((panel) => ({
      text: getComputedStyle(panel).color,
      background: getComputedStyle(document.body).getPropertyValue('--vscode-sideBar-background').trim(),
    }));
  }

  /** Relative luminance-ish of "rgb(r, g, b)": 0 black, 255 white. */
  function brightness(rgb: string): number {
    const [r, g, b] = (rgb.match(/\d+/g) ?? []).map(Number);
    return 0.299 * r + 0.587 * g + 0.114 * b;
  }

  it("follows the theme through VS Code's CSS variables", async () => {
    await workbench.openViewContainer('EMPO²');
    const before = await tipsPanelColours();
    await workbench.pickCommand('Preferences: Color Theme');
    await workbench.page.keyboard.type('Dark Modern');
    await workbench.paletteRow('Dark Modern').first().click();
    await workbench.quickInput().waitFor({ state: 'hidden' });
    const after = await workbench.eventually('the webview to restyle', async () => {
      const colours = await tipsPanelColours();
      return colours.text !== before.text ? colours : undefined;
    });
    assert.ok(brightness(after.text) > 150, `light text on a dark theme (${after.text})`);
    assert.notEqual(after.background, before.background);
    await workbench.screenshot('30-dark-theme');
    // The charts re-read their colours from the theme too.
    await workbench.runCommand('EMPO²: Show Metrics');
    await workbench.webviewFrame('empo2-metrics-panel');
    await workbench.page.waitForTimeout(500);
    await workbench.screenshot('31-dark-theme-metrics');
  });
});
