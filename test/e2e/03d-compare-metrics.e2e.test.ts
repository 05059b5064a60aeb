import * as assert from 'node:assert/strict';
import type { Frame, Locator } from 'playwright-core';
import { Workbench } from './workbench';

// A person compares two runs of the tiny policy, as the bench's EMPO² and GRPO runs are
// compared: trains them from the palette (or takes the finished ones an earlier test trained),
// ticks both in "Compare Runs' Metrics…", reads one chart per metric with a line per run, and
// switches the x-axis to environment steps.

describe("Comparing runs' metrics, as a person does it", function () {
  this.timeout(900_000);
  const workbench = new Workbench();

  /** Top-level run rows of the Trajectories tree (branch runs sit under their parent). */
  function topRuns(): Locator {
    return workbench.treeRow(/^run-/).and(workbench.page.locator('[aria-level="1"]'));
  }

  async function finishedRunIds(): Promise<string[]> {
    return topRuns().filter({ hasText: 'finished' }).locator('.label-name').allInnerTexts();
  }

  async function panelState(frame: Frame): Promise<{
    heading: string;
    runs: string[];
    charts: { id: string; points: number; latest: string; iteration: string }[];
  }> {
    return frame.locator('empo2-metrics-panel').evaluate((panel) => {
      const root = panel.shadowRoot!;
      return {
        // One run: its id; several: "N runs".
        heading: root.querySelector('h2')?.textContent ?? '',
        runs: Array.from(root.querySelectorAll<HTMLElement>('[data-testid="run"]')).map(
          (row) => row.dataset.runId ?? '',
        ),
        charts: Array.from(root.querySelectorAll<HTMLElement>('empo2-metrics-chart')).map((chart) => ({
          id: chart.dataset.chart ?? '',
          points: Number(chart.dataset.points ?? 0),
          latest: chart.dataset.latest ?? '',
          iteration: chart.shadowRoot?.querySelector('[data-testid="iteration"]')?.textContent ?? '',
        })),
      };
    });
  }

  async function acceptPick(): Promise<void> {
    await workbench.quickInput().locator('.monaco-button', { hasText: 'OK' }).click();
    await workbench.quickInput().waitFor({ state: 'hidden' });
  }

  it('trains two runs, overlays them in one panel, and puts them on environment steps', async () => {
    if (!(await workbench.statusBarItem('EMPO²: CPU').isVisible())) {
      await workbench.runCommand('EMPO²: Start Host');
      await workbench.statusBarItem('EMPO²: CPU').waitFor({ timeout: 120_000 });
    }
    await workbench.openViewContainer('EMPO²');
    // Two finished real runs: the one the training test left (when it ran), and new ones.
    while ((await finishedRunIds()).length < 2) {
      const before = (await finishedRunIds()).length;
      await workbench.pickCommand('EMPO²: New Training Run');
      await workbench.quickInputRows().filter({ hasText: '.empo2/configs/tiny.json' }).first().click();
      await workbench.quickInput().waitFor({ state: 'hidden' });
      await workbench.eventually(
        'the run to finish',
        async () => ((await finishedRunIds()).length > before ? true : undefined),
        420_000,
      );
    }
    const compared = (await finishedRunIds()).slice(0, 2);

    await workbench.pickCommand("EMPO²: Compare Runs' Metrics…");
    await workbench.quickInputTitle().filter({ hasText: "Compare Runs' Metrics" }).waitFor();
    await workbench.tickExactly(compared); // the current run comes ticked
    await workbench.screenshot('13d-compare-pick');
    await acceptPick();

    const frame = await workbench.webviewFrame('empo2-metrics-panel', 60_000);
    const overlaid = await workbench.eventually(
      'both runs charted',
      async () => {
        const state = await panelState(frame);
        return state.runs.length === 2 && state.charts.length > 0 && state.charts.every((c) => c.points > 0)
          ? state
          : undefined;
      },
      60_000,
    );
    assert.deepEqual([...overlaid.runs].sort(), [...compared].sort());
    // One chart per metric key, each run a series named by its run id.
    const score = overlaid.charts.find((c) => c.id === 'return/rollout/return');
    assert.ok(score, `a chart of the mean score: ${overlaid.charts.map((c) => c.id).join(', ')}`);
    for (const runId of compared) {
      assert.ok(score.latest.includes(runId), `${runId} in "${score.latest}"`);
    }
    assert.match(score.iteration, /^iteration \d+$/);
    await workbench.screenshot('13e-compare-two-runs');

    // The bench compares at equal environment steps: the x-axis select offers them.
    const axis = frame.locator('empo2-metrics-panel vscode-single-select[data-testid="axis"]');
    await axis.click();
    // The open dropdown's options are the select's own list items (in its shadow root).
    await axis.locator('li.option', { hasText: 'x: environment steps' }).click();
    const bySteps = await workbench.eventually(
      'the charts on environment steps',
      async () => {
        const state = await panelState(frame);
        const chart = state.charts.find((c) => c.id === 'return/rollout/return');
        return chart && /^environment steps \d+$/.test(chart.iteration) ? state : undefined;
      },
      20_000,
    );
    const steps = bySteps.charts.find((c) => c.id === 'return/rollout/return')!;
    // The tiny config's iterations take several steps each: x is no longer the iteration count.
    assert.ok(Number(steps.iteration.split(' ').pop()) > 2, steps.iteration);
    for (const runId of compared) {
      assert.ok(steps.latest.includes(runId), `${runId} in "${steps.latest}"`);
    }
    await workbench.screenshot('13f-compare-env-steps');

    // From a comparison, Show Metrics shows the current run alone: the one selected in the tree,
    // which the status bar names. (It once drew the first run this host had trained, compared[1]
    // when this test trained both: the newest run comes first in the tree.)
    const [current, other] = compared;
    await workbench.treeRow(current).first().locator('.label-name').click();
    await workbench.statusBarItem(current).waitFor({ timeout: 20_000 });
    await workbench.runCommand('EMPO²: Show Metrics');
    const alone = await workbench.eventually(
      `Show Metrics to show ${current} alone`,
      async () => {
        const state = await panelState(frame);
        return state.runs.length === 0 && state.charts.some((c) => c.points > 0) ? state : undefined;
      },
      20_000,
    );
    assert.equal(alone.heading, current, `Show Metrics showed "${alone.heading}", not the current run ${current}`);

    // "Add run…" in the panel overlays the other run again; its × leaves the current one.
    await frame.locator('empo2-metrics-panel vscode-button[data-testid="add-runs"]').click();
    await workbench.quickInputTitle().filter({ hasText: 'Add Runs to the Metrics' }).waitFor();
    await workbench.tickExactly([other]);
    await acceptPick();
    const added = await workbench.eventually(
      'the run added',
      async () => {
        const state = await panelState(frame);
        return state.runs.length === 2 ? state : undefined;
      },
      60_000,
    );
    assert.deepEqual(added.runs, [current, other]);
    await frame.locator(`empo2-metrics-panel [data-testid="run"][data-run-id="${other}"] button.remove`).click();
    await workbench.eventually(
      'one run left',
      async () => {
        const state = await panelState(frame);
        return state.runs.length === 0 && state.heading === current && state.charts.some((c) => c.id === 'return')
          ? true
          : undefined;
      },
      20_000,
    );
    await workbench.runCommand('View: Close All Editors');
  });
});
