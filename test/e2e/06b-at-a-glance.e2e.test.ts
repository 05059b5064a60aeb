import * as assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Frame, Locator } from 'playwright-core';
import { e2eSession } from './session';
import { type SeenRow, Workbench } from './workbench';

// A person reads the Trajectories tree at the sidebar's default width and a chart of a run and
// its one-iteration branch, at a glance: each row's essential part is whole, every iteration row
// says its success one way, and a chart of float noise is flat with readable tick labels.

const RUN = 'builtin-20261204-212233';
const BRANCH = `${RUN}-branch-1`;

interface RowText {
  readonly label: string;
  readonly description: string;
  readonly level: number;
  /** Whether the label is drawn whole (not cut by the sidebar's edge). */
  readonly labelShown: boolean;
  /** Whether the label and the description up to its first " · " are drawn whole. */
  readonly essentialShown: boolean;
}

describe('The tree and the charts, at a glance', function () {
  this.timeout(300_000);
  const workbench = new Workbench();

  /** Every rendered row of the Trajectories tree: its text and whether its essential part shows. */
  async function rowTexts(): Promise<RowText[]> {
    const pane = workbench.page
      .locator('.part.sidebar .pane')
      .filter({ has: workbench.page.locator('.pane-header', { hasText: 'Trajectories' }) });
    return pane.locator('.monaco-list-row').evaluateAll((rows) =>
      rows.map((row) => {
        const container = row.querySelector<HTMLElement>('.monaco-icon-label-container')!;
        const label = row.querySelector<HTMLElement>('.label-name')?.innerText ?? '';
        const descriptionElement = row.querySelector<HTMLElement>('.label-description');
        const description = descriptionElement?.innerText ?? '';
        // Where the essential text ends on screen, against where the row's text is cut: the
        // nearest right edge of the elements around it (each may clip it).
        let edge = Infinity;
        for (
          let element: HTMLElement | null = container;
          element && element !== row.parentElement;
          element = element.parentElement
        ) {
          edge = Math.min(edge, element.getBoundingClientRect().right);
        }
        // How far each text reaches when drawn whole (an ellipsis truncates what the page
        // reports of a cut text, so its width is measured in its own font), against that edge.
        const canvas = document.createElement('canvas').getContext('2d')!;
        const reach = (element: HTMLElement | null, text: string) => {
          if (!element) {
            return 0;
          }
          canvas.font = getComputedStyle(element).font;
          return element.getBoundingClientRect().left + canvas.measureText(text).width;
        };
        const labelEnd = reach(row.querySelector<HTMLElement>('.label-name'), label);
        // Text cut short ends in an ellipsis, which takes the room of the letters before it: an
        // essential part followed by more shows whole only with room for the "…" after it.
        const essential = description.split(' · ')[0];
        const end = essential
          ? reach(descriptionElement, essential === description ? essential : `${essential}…`)
          : labelEnd;
        return {
          label,
          description,
          labelShown: labelEnd <= edge + 0.5,
          essentialShown: end <= edge + 0.5,
          level: Number(row.getAttribute('aria-level')),
        };
      }),
    );
  }

  /** The uPlot of a chart of the metrics panel: the y axis' range and tick labels, and one series' points. */
  async function plotOf(
    frame: Frame,
    chartId: string,
    series: number,
  ): Promise<{ min: number; max: number; labels: string[]; axisWidth: number; x: number[]; y: (number | null)[] }> {
    return frame.locator(`empo2-metrics-panel`).evaluate(
      (panel, [id, s]) => {
        const chart = panel.shadowRoot!.querySelector(`empo2-metrics-chart[data-chart="${id}"]`) as HTMLElement & {
          plot: {
            scales: { y: { min: number; max: number } };
            axes: { _values?: string[]; _size?: number }[];
            data: (number | null)[][];
          };
        };
        chart.scrollIntoView();
        const plot = chart.plot;
        return {
          min: plot.scales.y.min,
          max: plot.scales.y.max,
          labels: plot.axes[1]._values ?? [],
          axisWidth: plot.axes[1]._size ?? 0,
          x: plot.data[0] as number[],
          y: plot.data[Number(s) + 1],
        };
      },
      [chartId, series] as const,
    );
  }

  before(async () => {
    // A run under the id the editor gives one, with a one-iteration branch (test/harness/syntheticRun.mjs).
    const harness = path.resolve(__dirname, '../../../../test/harness/syntheticRun.mjs');
    const { writeBranchedRun } = await import(pathToFileURL(harness).href);
    writeBranchedRun(e2eSession().fixtures.runRoot, { name: RUN });
    if (!(await workbench.statusBarItem('EMPO²: CPU').isVisible())) {
      await workbench.runCommand('EMPO²: Start Host');
      await workbench.statusBarItem('EMPO²: CPU').waitFor({ timeout: 120_000 });
    }
    await workbench.openViewContainer('EMPO²');
    await workbench.collapseTree();
    await workbench.runCommand('EMPO²: Refresh');
  });

  it("shows each row's essential part whole at the default sidebar width, and one success form on every iteration", async () => {
    const run = await workbench.waitForTreeRow(RUN);
    await workbench.expandRow(run);
    await workbench.waitForTreeRow('Iteration 14');
    // Under its parent, a branch is named by what its id adds: the state fits beside it.
    await workbench
      .treeRow(/^branch-1$/)
      .first()
      .waitFor();
    // Labelled from the run's metrics, then the newest iteration expanded (its episodes loaded).
    const iterationRows = async () => (await rowTexts()).filter((row) => /^Iteration \d+$/.test(row.label));
    const before = await workbench.eventually('iteration rows labelled', async () => {
      const rows = await iterationRows();
      return rows.length >= 5 && rows.every((row) => /% ✓/.test(row.description)) ? rows : undefined;
    });
    await workbench.expandRow(workbench.treeRow('Iteration 14').first());
    const group = workbench.treeRow(/^(power-device|grow-plant|heat-food)\//).first();
    await workbench.expandRow(group);
    await workbench.treeRow('Episode 0000').first().waitFor();
    const after = await iterationRows();
    const before14 = before.find((row) => row.label === 'Iteration 14')!.description;
    const after14 = after.find((row) => row.label === 'Iteration 14')!.description;
    assert.equal(after14, before14, 'an iteration row reads the same once expanded');
    for (const row of after) {
      assert.match(
        row.description,
        /^\d+% ✓ · score \S+ · (with memory|memory-free)$/,
        `${row.label}: ${row.description}`,
      );
    }
    await workbench.screenshot('60-tree-default-width');
    const rows = await rowTexts();
    // A run id of the editor's form (23 characters) with its state beside it, "runnin…" once.
    assert.ok(
      rows.some((row) => row.label === RUN && row.labelShown),
      'the run listed',
    );
    const cut = rows.filter((row) => !row.essentialShown).map((row) => `${row.label} ${row.description}`);
    assert.deepEqual(cut, [], 'rows whose essential part the sidebar cuts');
    const width = await workbench.page
      .locator('.part.sidebar')
      .evaluate((element) => element.getBoundingClientRect().width);
    workbench.measure('UI: sidebar width of the tree screenshot (px)', width);
  });

  it('says what a new run waits for, in a row under it, until its first episode ends', async () => {
    // tiny.json's 5-step episodes can end before VS Code asks for the new run's children even
    // once (the tree then draws "Iteration 1" first, rightly). Its policy never finishes these
    // tasks, so every first episode lasts max_steps steps; the group's episodes step together,
    // about 20 ms a step here: 200 steps keep the row up for seconds on a fast machine too (30
    // steps, well under a second, were once missed).
    const configs = path.join(e2eSession().workspace, '.empo2', 'configs');
    const tiny = JSON.parse(readFileSync(path.join(configs, 'tiny.json'), 'utf8')) as { env: object };
    writeFileSync(
      path.join(configs, 'slow-first-episode.json'),
      JSON.stringify({ ...tiny, env: { ...tiny.env, max_steps: 200 } }, null, 2) + '\n',
    );
    await workbench.collapseTree();
    const seenRows = await workbench.recordTreeRows();
    await workbench.pickCommand('EMPO²: New Training Run');
    // Typed, as a person finds a file in a long list: the host's environments come first, and
    // a row out of view is not drawn.
    await workbench.quickInput().locator('input').first().fill('slow-first-episode.json');
    await workbench
      .quickInputRows()
      .filter({ hasText: '.empo2/configs/slow-first-episode.json' })
      .first()
      .click({ timeout: 60_000 });
    await workbench.quickInput().waitFor({ state: 'hidden' });
    try {
      await waitingRowUnderNewRun(seenRows);
    } finally {
      // Leave no run training for the files after this one, even when this test fails (the next
      // New Training Run would ask about it in a modal dialog).
      await stopTrainingRun();
    }
  });

  async function waitingRowUnderNewRun(seenRows: () => Promise<SeenRow[]>): Promise<void> {
    // The row that says what it waits for is read from the record of drawn rows, and shot when
    // it is still there.
    const waitingLabel = /^(Building the built-in policy|Loading the policy|Waiting for the first episode)/;
    const waiting = workbench.treeRow(waitingLabel).first();
    if (
      await waiting.waitFor({ timeout: 2_000 }).then(
        () => true,
        () => false,
      )
    ) {
      await workbench.screenshot('62-tree-run-waiting');
    }
    // Then the first iteration's row takes its place.
    await workbench.treeRow('Iteration 1').first().waitFor({ timeout: 180_000 });
    await waiting.waitFor({ state: 'detached', timeout: 30_000 });
    const seen = await seenRows();
    const waitingRows = seen.filter((row) => waitingLabel.test(row.label));
    assert.ok(
      waitingRows.length > 0,
      `a row said what the run waits for; the tree drew: ${JSON.stringify(seen.map((row) => row.label))}`,
    );
    for (const row of waitingRows) {
      assert.ok(row.spinner, `a spinner beside "${row.label}"`);
      assert.match(row.above, /^run-/, `"${row.label}" drawn under the new run, not under "${row.above}"`);
    }
  }

  async function stopTrainingRun(): Promise<void> {
    const training = workbench
      .treeRow(/^run-/)
      .filter({ has: workbench.page.locator('.codicon-sync, .codicon-loading') });
    await workbench.runCommand('EMPO²: Stop Run');
    await workbench.eventually(
      'the run to stop',
      async () => ((await training.count()) === 0 ? true : undefined),
      180_000,
    );
  }

  it("draws float noise flat with whole tick labels, and a branch's line from its parent's point", async () => {
    await workbench.pickCommand("EMPO²: Compare Runs' Metrics…");
    await workbench.quickInputTitle().filter({ hasText: "Compare Runs' Metrics" }).waitFor();
    await workbench.tickExactly([RUN, BRANCH]);
    await workbench.quickInput().locator('.monaco-button', { hasText: 'OK' }).click();
    await workbench.quickInput().waitFor({ state: 'hidden' });
    const frame = await workbench.webviewFrame('empo2-metrics-panel', 60_000);
    const panel: Locator = frame.locator('empo2-metrics-panel');
    const runs = await workbench.eventually(
      'both runs shown',
      async () => {
        const ids = await panel.evaluate((p) =>
          Array.from(p.shadowRoot!.querySelectorAll<HTMLElement>('[data-testid="run"]')).map(
            (row) => row.dataset.runId ?? '',
          ),
        );
        return ids.length === 2 ? ids : undefined;
      },
      60_000,
    );
    const branchIndex = runs.indexOf(BRANCH);
    const parentIndex = runs.indexOf(RUN);
    assert.ok(branchIndex >= 0 && parentIndex >= 0, runs.join(', '));

    const masked = await workbench.eventually(
      'the masked-token chart drawn',
      async () => {
        const plot = await plotOf(frame, 'masked/update/masked_fraction', parentIndex).catch(() => undefined);
        return plot && plot.labels.length > 0 ? plot : undefined;
      },
      30_000,
    );
    const span = masked.max - masked.min;
    assert.ok(span >= 0.05 * 0.0123, `the y axis spans ${span}: 1e-11 of noise would be a steep slope`);
    assert.ok(
      masked.labels.every((label) => label.length <= 7),
      `tick labels ${masked.labels.join(', ')}`,
    );
    assert.ok(masked.axisWidth >= 56, `axis ${masked.axisWidth} px`);
    await workbench.screenshot('61-charts-noise-flat-branch-joined'); // the masked chart, and the score charts above it

    const score = await plotOf(frame, 'return/rollout/return', branchIndex);
    const at = (iteration: number) => score.y[score.x.indexOf(iteration)];
    const parentScore = await plotOf(frame, 'return/rollout/return', parentIndex);
    assert.equal(
      at(13),
      parentScore.y[parentScore.x.indexOf(13)],
      "the branch's line starts at its parent's point at checkpoint 13",
    );
    assert.equal(typeof at(14), 'number', 'and reaches its own iteration 14');
    await workbench.runCommand('View: Close All Editors');
  });
});
