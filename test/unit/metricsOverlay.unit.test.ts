import * as assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import {
  appendColumns,
  appendRecords,
  CHARTS,
  emptyColumns,
  type ChartSpec,
  type MetricsColumns,
} from '../../src/runs/metricsCharts';
import {
  alignRuns,
  chartData,
  overlayKey,
  RUN_COLORS,
  RUN_DASHES,
  runLabels,
  X_AXES,
} from '../../src/runs/metricsOverlay';
import type { MetricsRecord } from '../../src/rpc/protocol';
import { aMetricsRecord } from '../builders/protocol';

const root = path.resolve(__dirname, '../../../..');
const RETURN = 'rollout/return';
const EVAL = 'eval/memory_free/success';

/** A run's columns from records built with every other field defaulted. */
function runOf(records: readonly Partial<MetricsRecord>[]): MetricsColumns {
  return appendRecords(
    emptyColumns(),
    records.map((fields) => aMetricsRecord(fields)),
  );
}

/** `iterations` iterations, env steps `stepsPerIteration` apart, return = 10 × iteration. */
function steadyRun(
  iterations: number,
  stepsPerIteration: number,
  extra: (i: number) => Partial<MetricsRecord> = () => ({}),
): MetricsColumns {
  return runOf(
    Array.from({ length: iterations }, (_, k) => ({
      iteration: k + 1,
      env_steps: (k + 1) * stepsPerIteration,
      [RETURN]: 10 * (k + 1),
      ...extra(k + 1),
    })),
  );
}

/** Rows `from` on of a run's columns (what an append message carries). */
function sliceRows(columns: MetricsColumns, from: number): MetricsColumns {
  return {
    iterations: columns.iterations.slice(from),
    series: Object.fromEntries(Object.entries(columns.series).map(([key, values]) => [key, values.slice(from)])),
  };
}

function chart(charts: readonly ChartSpec[], id: string): ChartSpec | undefined {
  return charts.find((c) => c.id === id);
}

describe('metrics overlay', () => {
  it('draws one run on iterations from its own columns, with the single-run charts', () => {
    const columns = steadyRun(3, 10);
    const data = chartData([{ label: 'a', columns }], X_AXES.iteration);
    // The same arrays, not a copy: live appends land in them and the charts redraw in place.
    assert.equal(data.columns, columns);
    assert.equal(data.charts, CHARTS);
    assert.deepEqual(data.missingAxis, []);
  });

  it('aligns runs of different lengths on the union of their iterations, null where a run has no row', () => {
    const short = steadyRun(2, 10);
    const long = steadyRun(4, 10);
    const aligned = alignRuns([short, long], X_AXES.iteration, [RETURN]);
    assert.deepEqual(aligned.iterations, [1, 2, 3, 4]);
    assert.deepEqual(aligned.series[overlayKey(0, RETURN)], [10, 20, null, null]);
    assert.deepEqual(aligned.series[overlayKey(1, RETURN)], [10, 20, 30, 40]);
  });

  it('aligns on environment steps: each run at its own steps, both where they coincide', () => {
    // GRPO's iterations take 15 steps, EMPO²'s 10: at equal env steps they meet at 30 and 60.
    const empo2 = steadyRun(6, 10);
    const grpo = steadyRun(4, 15);
    const aligned = alignRuns([empo2, grpo], X_AXES.envSteps, [RETURN]);
    assert.deepEqual(aligned.iterations, [10, 15, 20, 30, 40, 45, 50, 60]);
    assert.deepEqual(aligned.series[overlayKey(0, RETURN)], [10, null, 20, 30, 40, null, 50, 60]);
    assert.deepEqual(aligned.series[overlayKey(1, RETURN)], [null, 10, null, 20, null, 30, null, 40]);
  });

  it('leaves out rows without env_steps on that axis, and names a run that has none', () => {
    const counted = steadyRun(2, 10);
    const partly = runOf([
      { iteration: 1, env_steps: 5, [RETURN]: 1 },
      { iteration: 2, env_steps: null, [RETURN]: 2 },
      { iteration: 3, env_steps: 20, [RETURN]: 3 },
    ]);
    const uncounted = runOf([{ iteration: 1, [RETURN]: 7 }]);
    const data = chartData(
      [
        { label: 'counted', columns: counted },
        { label: 'partly', columns: partly },
        { label: 'old', columns: uncounted },
      ],
      X_AXES.envSteps,
    );
    assert.deepEqual(data.columns.iterations, [5, 10, 20]);
    assert.deepEqual(data.columns.series[overlayKey(1, RETURN)], [1, null, 3]);
    assert.deepEqual(data.missingAxis, ['old']);
    // The run without steps is in no chart on this axis; on iterations it is.
    assert.deepEqual(
      chart(data.charts, `return/${RETURN}`)?.series.map((s) => s.label),
      ['counted', 'partly'],
    );
    const byIteration = chartData(
      [
        { label: 'counted', columns: counted },
        { label: 'old', columns: uncounted },
      ],
      X_AXES.iteration,
    );
    assert.deepEqual(
      chart(byIteration.charts, `return/${RETURN}`)?.series.map((s) => s.label),
      ['counted', 'old'],
    );
  });

  it("gives each key its own chart, one series per run in the run's colour, leaving out a run without the key", () => {
    // Only the EMPO² run evaluated; neither wrote a KL to the reference (kl_beta 0).
    const empo2 = steadyRun(3, 10, (i) => (i === 3 ? { [EVAL]: 0.5 } : {}));
    const grpo = steadyRun(3, 10);
    const data = chartData(
      [
        { label: 'empo2-seed0', columns: empo2 },
        { label: 'grpo-seed0', columns: grpo },
      ],
      X_AXES.iteration,
    );
    const scores = chart(data.charts, `return/${RETURN}`)!;
    assert.deepEqual(
      scores.series.map((s) => [s.label, s.color, s.key]),
      [
        ['empo2-seed0', RUN_COLORS[0], overlayKey(0, RETURN)],
        ['grpo-seed0', RUN_COLORS[1], overlayKey(1, RETURN)],
      ],
    );
    // Named by its series first, so a title cut short still says which; the unit stays.
    assert.match(scores.title, /^all rollouts · Mean score/);
    assert.equal(scores.unit, CHARTS[0].unit);
    // The second run's line is dashed, so it shows over an equal first run's solid one.
    assert.deepEqual(
      scores.series.map((s) => s.dash),
      [undefined, RUN_DASHES[1]],
    );
    const evaluation = chart(data.charts, `success/${EVAL}`)!;
    assert.deepEqual(
      evaluation.series.map((s) => s.label),
      ['empo2-seed0'],
    );
    assert.equal(evaluation.series[0].points, true, 'evaluations stay points');
    assert.equal(evaluation.series[0].dash, undefined);
    assert.equal(chart(data.charts, 'kl/update/kl'), undefined, 'no run has it: no chart');
    // Every chart's series read the same key of different runs.
    for (const spec of data.charts) {
      const key = spec.id.slice(spec.id.indexOf('/') + 1);
      assert.ok(
        spec.series.every((s) => s.key.endsWith(`:${key}`)),
        spec.id,
      );
    }
  });

  it("takes a live run's new iterations into the overlay on the next alignment", () => {
    const finished = steadyRun(3, 10);
    const live = steadyRun(1, 10);
    const runs = [
      { label: 'finished', columns: finished },
      { label: 'live', columns: live },
    ];
    assert.deepEqual(chartData(runs, X_AXES.envSteps).columns.series[overlayKey(1, RETURN)], [10, null, null]);
    // Two iterations arrive (as the webview gets them: columns of the chart keys), then iteration
    // 3 is sent again after a resume rolled it back.
    appendColumns(live, sliceRows(steadyRun(3, 10), 1));
    appendColumns(live, runOf([{ iteration: 3, env_steps: 35, [RETURN]: 33 }]));
    const data = chartData(runs, X_AXES.envSteps);
    assert.deepEqual(data.columns.iterations, [10, 20, 30, 35]);
    assert.deepEqual(data.columns.series[overlayKey(0, RETURN)], [10, 20, 30, null]);
    assert.deepEqual(data.columns.series[overlayKey(1, RETURN)], [10, 20, null, 33]);
  });

  it('keeps the single-run chart layout for one run on environment steps', () => {
    const data = chartData([{ label: 'a', columns: steadyRun(3, 7) }], X_AXES.envSteps);
    assert.deepEqual(data.columns.iterations, [7, 14, 21]);
    assert.deepEqual(
      data.charts.map((c) => c.id),
      CHARTS.map((c) => c.id),
    );
    assert.deepEqual(data.columns.series[data.charts[0].series[0].key], [10, 20, 30]);
  });

  it('keeps the later of two rows at one x', () => {
    const run = runOf([
      { iteration: 1, env_steps: 10, [RETURN]: 1 },
      { iteration: 2, env_steps: 10, [RETURN]: 2 },
    ]);
    const aligned = alignRuns([run], X_AXES.envSteps, [RETURN]);
    assert.deepEqual(aligned.iterations, [10]);
    assert.deepEqual(aligned.series[overlayKey(0, RETURN)], [2]);
  });

  it('places rows whose env steps do not increase by their steps', () => {
    const run = runOf([
      { iteration: 1, env_steps: 30, [RETURN]: 3 },
      { iteration: 2, env_steps: 10, [RETURN]: 1 },
      { iteration: 3, env_steps: 20, [RETURN]: 2 },
    ]);
    const aligned = alignRuns([run, steadyRun(1, 15)], X_AXES.envSteps, [RETURN]);
    assert.deepEqual(aligned.iterations, [10, 15, 20, 30]);
    assert.deepEqual(aligned.series[overlayKey(0, RETURN)], [1, null, 2, 3]);
    assert.deepEqual(aligned.series[overlayKey(1, RETURN)], [null, 10, null, null]);
  });

  it('names runs by id, adding the folder only where two share an id', () => {
    assert.deepEqual(
      runLabels([
        { runId: 'seed0', path: '/bench/a/seed0' },
        { runId: 'seed0', path: '/bench/b/seed0' },
        { runId: 'grpo', path: '/runs/grpo' },
      ]),
      ['seed0 (/bench/a/seed0)', 'seed0 (/bench/b/seed0)', 'grpo'],
    );
  });

  it('puts env steps on the axis under the key the host declares', () => {
    const declared = Object.keys(
      JSON.parse(readFileSync(path.join(root, 'protocol', 'metric-keys.json'), 'utf8')).metrics as Record<
        string,
        string
      >,
    );
    assert.ok(declared.includes(X_AXES.envSteps.key));
    assert.ok(emptyColumns().series[X_AXES.envSteps.key], 'the webview receives the env steps of each run');
  });

  it("starts a branch's line from its parent's point at the checkpoint, not as a lone dot", () => {
    const parent = steadyRun(5, 10, (i) => (i % 5 === 0 ? { [EVAL]: 0.5 } : {}));
    // A rerun at checkpoint 3: one iteration of its own, 4.
    const branch = runOf([{ iteration: 4, env_steps: 40, [RETURN]: 99 }]);
    const runs = [
      { label: 'parent', columns: parent },
      { label: 'parent-branch-1', columns: branch, branchOf: { run: 0, checkpoint: 3 } },
    ];
    const data = chartData(runs, X_AXES.iteration);
    assert.deepEqual(data.columns.iterations, [1, 2, 3, 4, 5]);
    assert.deepEqual(
      data.columns.series[overlayKey(1, RETURN)],
      [null, null, 30, 99, null],
      "a segment from the parent's 30 at iteration 3",
    );
    assert.deepEqual(data.columns.series[overlayKey(0, RETURN)], [10, 20, 30, 40, 50]);
    assert.ok(
      !data.columns.series[overlayKey(1, EVAL)]?.some((v) => v !== null),
      'no evaluation point the branch did not make',
    );
    assert.deepEqual(branch.iterations, [4], "the branch's own columns are left as they are (they grow in place)");
    // On environment steps too: the joined row carries the parent's x on that axis.
    const onSteps = chartData(runs, X_AXES.envSteps);
    const at = onSteps.columns.iterations.indexOf(30);
    assert.equal(onSteps.columns.series[overlayKey(1, RETURN)][at], 30);
    // Without its parent shown, or from a checkpoint the parent has no row at: as it is.
    assert.deepEqual(
      chartData([runs[1], { label: 'other', columns: steadyRun(2, 10) }], X_AXES.iteration).columns.series[
        overlayKey(0, RETURN)
      ].filter((v) => v !== null),
      [99],
    );
    const unknown = chartData([runs[0], { ...runs[1], branchOf: { run: 0, checkpoint: 7 } }], X_AXES.iteration);
    assert.deepEqual(
      unknown.columns.series[overlayKey(1, RETURN)].filter((v) => v !== null),
      [99],
    );
  });
});
