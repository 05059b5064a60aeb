import * as path from 'node:path';
import type { Frame, Locator, Page } from 'playwright-core';
import { eventually } from '../builders/wait';
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
    // A click on the icon of the container already shown closes the side bar; on a loaded
    // machine the container may be opening as we look, so a click that closed it is undone.
    for (let attempt = 0; attempt < 3 && !(await title.isVisible()); attempt++) {
      await this.activityBarItem(label).click();
      await title.waitFor({ timeout: 5_000 }).catch(() => undefined);
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

  /** In the open multi-select pick, ticks exactly the rows labelled `wanted`, as a person clicks them. */
  async tickExactly(wanted: readonly string[]): Promise<void> {
    await this.quickInputRows().first().waitFor();
    // The list draws only the rows in view: with more runs than fit, a row to tick (or one that
    // came ticked) is not in the DOM until the list scrolls to it. So each drawn row is set,
    // then the list scrolls on, until a scroll draws no row not seen yet.
    const seen = new Set<string>();
    for (let page = 0; page < 50; page++) {
      let fresh = 0;
      for (const row of await this.quickInputRows().all()) {
        // The row's first label is its own; a detail line under it (a run's folder) has one too.
        const label = (await row.locator('.label-name').first().innerText()).trim();
        if (seen.has(label)) {
          continue;
        }
        seen.add(label);
        fresh++;
        const tick = wanted.includes(label);
        if ((await row.getAttribute('aria-checked')) !== String(tick)) {
          await row.locator('.label-name').first().click();
          await this.eventually(
            `${label} ${tick ? 'ticked' : 'unticked'}`,
            async () => ((await row.getAttribute('aria-checked')) === String(tick) ? true : undefined),
            5_000,
          );
        }
      }
      if (fresh === 0 && page > 0) {
        break;
      }
      await this.quickInput().locator('.monaco-list').first().hover();
      await this.page.mouse.wheel(0, 120);
      await this.page.waitForTimeout(150);
    }
    const missing = wanted.filter((label) => !seen.has(label));
    if (missing.length > 0) {
      throw new Error(`the pick lists no row ${missing.join(', ')}; it lists ${[...seen].join(', ')}`);
    }
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
  eventually<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 20_000): Promise<T> {
    return eventually(what, probe, timeoutMs);
  }

  /**
   * The frame that hosts a webview's page. VS Code nests it: an outer iframe (its own host page)
   * and an inner one holding our HTML, so we search every frame for an element of our page.
   */
  async webviewFrame(selector: string, timeoutMs = 20_000): Promise<Frame> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      for (const frame of this.page.frames()) {
        if (
          await frame
            .locator(selector)
            .count()
            .catch(() => 0)
        ) {
          return frame;
        }
      }
      if (Date.now() > deadline) {
        throw new Error(`no webview frame shows ${selector} after ${timeoutMs} ms`);
      }
      await this.page.waitForTimeout(250);
    }
  }

  /** Rows of the Trajectories tree by label: a string is the label's start, not followed by a
   * digit or a colon ('Iteration 1' is neither 'Iteration 12' nor 'Iteration 1: waiting…'). */
  treeRow(label: string | RegExp): Locator {
    const text = typeof label === 'string' ? new RegExp(`^\\s*${escapeRegExp(label)}(?![\\d:])`) : label;
    return this.page
      .locator('.part.sidebar .pane')
      .filter({ has: this.page.locator('.pane-header', { hasText: 'Trajectories' }) })
      .locator('.monaco-list-row')
      .filter({ has: this.page.locator('.label-name', { hasText: text }) });
  }

  /** Waits for a row of the Trajectories tree; if it never shows, the error says what the tree
   * showed instead (a CI log has no screenshot). */
  async waitForTreeRow(label: string | RegExp, timeoutMs = 30_000): Promise<Locator> {
    const row = this.treeRow(label).first();
    try {
      await row.waitFor({ timeout: timeoutMs });
      return row;
    } catch {
      const header = this.viewHeader('Trajectories');
      const expanded = await header.getAttribute('aria-expanded', { timeout: 1_000 }).catch(() => 'absent');
      const pane = this.page
        .locator('.part.sidebar .pane')
        .filter({ has: this.page.locator('.pane-header', { hasText: 'Trajectories' }) });
      const rows = await pane
        .locator('.monaco-list-row .label-name')
        .allInnerTexts()
        .catch(() => []);
      throw new Error(
        `no Trajectories row ${label} after ${timeoutMs} ms; the view is expanded: ${expanded}, its rendered rows: ${JSON.stringify(rows)}`,
      );
    }
  }

  /**
   * Starts recording every row the Trajectories tree draws, however briefly: a row shown for a
   * few hundred milliseconds falls between a locator's polls (they space out to 500 ms), so a
   * test of a passing state reads this record instead. Each row once, in the order first drawn;
   * the function returned reads the record and stops it.
   */
  async recordTreeRows(): Promise<() => Promise<SeenRow[]>> {
    await this.page.evaluate(() => {
      const seen: { label: string; level: number; spinner: boolean; above: string }[] = [];
      const keys = new Set<string>();
      const look = () => {
        for (const pane of Array.from(document.querySelectorAll('.part.sidebar .pane'))) {
          if (!pane.querySelector('.pane-header')?.textContent?.includes('Trajectories')) {
            continue;
          }
          const rows = Array.from(pane.querySelectorAll<HTMLElement>('.monaco-list-row'));
          // Rows are absolutely placed; their order on screen is their offset's.
          rows.sort((a, b) => a.offsetTop - b.offsetTop);
          rows.forEach((row, index) => {
            const label = row.querySelector<HTMLElement>('.label-name')?.textContent ?? '';
            const spinner = row.querySelector('.codicon-loading') !== null;
            const level = Number(row.getAttribute('aria-level'));
            const above =
              index > 0 ? (rows[index - 1].querySelector<HTMLElement>('.label-name')?.textContent ?? '') : '';
            const key = `${level}|${label}|${spinner}`;
            if (!keys.has(key)) {
              keys.add(key);
              seen.push({ label, level, spinner, above });
            }
          });
        }
      };
      const observer = new MutationObserver(look);
      observer.observe(document.body, {
        subtree: true,
        childList: true,
        characterData: true,
        attributes: true,
        attributeFilter: ['class', 'aria-level'],
      });
      look();
      (window as unknown as { empo2SeenRows: unknown }).empo2SeenRows = { seen, observer };
    });
    // Reading the record ends it (an observer of the whole page costs on every later change).
    return () =>
      this.page.evaluate(() => {
        const record = (window as unknown as { empo2SeenRows: { seen: SeenRow[]; observer: MutationObserver } })
          .empo2SeenRows;
        record.observer.disconnect();
        return record.seen;
      });
  }

  /** Collapses every row of the Trajectories tree (its title's Collapse All action), with the
   * view itself expanded: its title actions show only then. */
  async collapseTree(): Promise<void> {
    const header = this.viewHeader('Trajectories');
    if ((await header.getAttribute('aria-expanded')) === 'false') {
      await header.click();
    }
    await header.hover();
    await header.locator('.action-label[aria-label="Collapse All"]').click();
  }

  /** The twistie of a tree row: a click there expands or collapses it (a click on the label of
   * a row with a command, like an episode, runs the command instead). */
  twistie(row: Locator): Locator {
    return row.locator('.monaco-tl-twistie');
  }

  /** Expands a collapsed tree row (an expanded row is left as it is). */
  async expandRow(row: Locator): Promise<void> {
    await row.waitFor();
    // A row of a run that trains can move between the locator finding it and the click landing
    // (a new iteration's row is inserted above it), and the click then toggles its neighbour:
    // click again until this row is the expanded one.
    await this.eventually(
      'the row to expand',
      async () => {
        if ((await row.getAttribute('aria-expanded')) === 'true') {
          return true;
        }
        await this.twistie(row).click();
        await this.page.waitForTimeout(500);
        return (await row.getAttribute('aria-expanded')) === 'true' ? true : undefined;
      },
      20_000,
    );
  }

  /** Picks a folder in VS Code's own folder dialog (the browser has no native one) by typing its path. */
  async pickFolder(folder: string, okLabel: string): Promise<void> {
    const input = this.quickInput().locator('input').first();
    await input.waitFor();
    // The dialog fills in its start folder once it has read it; type over that, not before it.
    await this.quickInputRows().first().waitFor();
    const typed = folder.endsWith('/') ? folder : `${folder}/`;
    await this.eventually(
      'the dialog to show the typed folder',
      async () => {
        if ((await input.inputValue()) !== typed) {
          await input.fill(typed);
        }
        await this.page.waitForTimeout(300);
        return (await input.inputValue()) === typed ? true : undefined;
      },
      10_000,
    );
    await this.quickInput().locator('.monaco-button', { hasText: okLabel }).click();
    await this.quickInput().waitFor({ state: 'hidden' });
  }

  /** An editor tab by its title. */
  editorTab(title: string | RegExp): Locator {
    return this.page.locator('.part.editor .tabs-container .tab').filter({ hasText: title });
  }

  async clearNotifications(): Promise<void> {
    await this.runCommand('Notifications: Clear All Notifications');
  }

  measure(name: string, value: number | string): void {
    e2eSession().measurements[name] = value;
  }

  async screenshot(name: string): Promise<string> {
    const file = path.join(e2eSession().screenshotDir, `${name}.png`);
    // animations: 'disabled' finishes fades and slides, so a toast is captured fully drawn.
    await this.page.screenshot({ path: file, animations: 'disabled' });
    return file;
  }
}

/** A row of the Trajectories tree as drawn: its label, tree level, whether a spinner is beside
 * it, and the label of the row drawn above it. */
export interface SeenRow {
  readonly label: string;
  readonly level: number;
  readonly spinner: boolean;
  readonly above: string;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
