import * as path from 'node:path';
import type { Frame, Locator, Page } from 'playwright-core';
import { e2eSession } from './session';

// What a person sees and does in the VS Code workbench, in the words of the tests. The CSS
// selectors are VS Code's own (checked against code-server 4.139.1, VS Code 1.139.1); they are
// kept here so a VS Code update means fixing one file.

export class Workbench {
  constructor(readonly page: Page = e2eSession().page) {}

  activityBarItem(label: string): Locator {
    return this.page.locator(`.activitybar .action-item a.action-label[aria-label="${label}"]`);
  }

  /** Shows a view container; clicking one that is already shown would hide the side bar. */
  async openViewContainer(label: string): Promise<void> {
    const title = this.sideBarTitle().filter({ hasText: label });
    if (!(await title.isVisible())) {
      await this.activityBarItem(label).click();
    }
    await title.waitFor();
  }

  sideBarTitle(): Locator {
    return this.page.locator('.part.sidebar .composite.title .title-label');
  }

  /** The header of a view in the side bar, by its name ("Trajectories"). */
  viewHeader(name: string): Locator {
    return this.page.locator('.part.sidebar .pane-header').filter({ hasText: name });
  }

  /** The welcome content (viewsWelcome) of an empty view. */
  welcomeView(): Locator {
    return this.page.locator('.part.sidebar .welcome-view-content');
  }

  statusBarItem(text: string): Locator {
    return this.page.locator('.part.statusbar .statusbar-item').filter({ hasText: text });
  }

  notification(text: string | RegExp): Locator {
    return this.page.locator('.notifications-toasts .notification-toast').filter({ hasText: text });
  }

  quickInput(): Locator {
    return this.page.locator('.quick-input-widget');
  }

  quickInputTitle(): Locator {
    return this.quickInput().locator('.quick-input-title');
  }

  quickInputRows(): Locator {
    return this.quickInput().locator('.monaco-list-row');
  }

  /** F1, type the command's title, pick the row with that label, wait for the palette to close. */
  async runCommand(title: string): Promise<void> {
    await this.pickCommand(title);
    await this.quickInput().waitFor({ state: 'hidden' });
  }

  /** Like runCommand, for a command that opens a quick input of its own. */
  async pickCommand(title: string): Promise<void> {
    await this.openCommandPalette();
    await this.page.keyboard.type(title);
    // Click the exact match: the highlighted first row may be a longer title that contains it.
    const row = this.paletteRow(title).first();
    await row.waitFor();
    await row.click();
  }

  /** Rows of the open quick input whose label is exactly `label`. */
  paletteRow(label: string): Locator {
    const exactly = new RegExp(`^\\s*${label.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\s*$`);
    return this.quickInputRows().filter({ has: this.page.locator('.label-name', { hasText: exactly }) });
  }

  async openCommandPalette(): Promise<void> {
    await this.page.keyboard.press('Escape');
    await this.page.keyboard.press('F1');
    await this.quickInput().locator('input').waitFor();
  }

  async closeQuickInput(): Promise<void> {
    await this.page.keyboard.press('Escape');
    await this.quickInput().waitFor({ state: 'hidden' });
  }

  /** The text of the panel's editor (the Output view), as a person reads it. */
  async panelText(): Promise<string> {
    const lines = this.page.locator('.part.panel .monaco-editor .view-lines');
    await lines.first().waitFor();
    // Monaco renders spaces as no-break spaces.
    return (await lines.first().innerText()).replace(/\u00a0/g, ' ');
  }

  /** Polls until `probe` returns something other than undefined. */
  async eventually<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 20_000): Promise<T> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const value = await probe();
      if (value !== undefined) {
        return value;
      }
      if (Date.now() > deadline) {
        throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
      }
      await this.page.waitForTimeout(200);
    }
  }

  /**
   * The frame that hosts a webview's page. VS Code nests it: an outer iframe (its own host page)
   * and an inner one holding our HTML, so we search every frame for an element of our page.
   */
  async webviewFrame(selector: string, timeoutMs = 20_000): Promise<Frame> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      for (const frame of this.page.frames()) {
        if (await frame.locator(selector).count().catch(() => 0)) {
          return frame;
        }
      }
      if (Date.now() > deadline) {
        throw new Error(`no webview frame shows ${selector} after ${timeoutMs} ms`);
      }
      await this.page.waitForTimeout(250);
    }
  }

  async clearNotifications(): Promise<void> {
    await this.runCommand('Notifications: Clear All Notifications');
  }

  async screenshot(name: string): Promise<string> {
    const file = path.join(e2eSession().screenshotDir, `${name}.png`);
    // animations: 'disabled' finishes fades and slides, so a toast is captured fully drawn.
    await this.page.screenshot({ path: file, animations: 'disabled' });
    return file;
  }
}
