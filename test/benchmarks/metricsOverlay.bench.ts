// What one frame of an overlay costs: chartData (src/runs/metricsOverlay.ts) aligning two runs of
// 100,000 iterations each on one x, which the metrics panel does once per animation frame while a
// shown run trains. Prints milliseconds on each x-axis and a ratio against a baseline measured in
// the same run: the same values copied into fresh per-run columns with no alignment (the least a
// frame that rebuilds the columns must do), so the ratio holds whatever the machine's load.
//
//   npm run bench:overlay            # or: node out/tests/test/benchmarks/metricsOverlay.bench.js [iterations] [repeats]
//
// The unit test (test/unit/metricsOverlay.unit.test.ts) checks what the alignment does; this
// measures how fast.
import { appendRecords, CHARTS, emptyColumns, type MetricsColumns } from '../../src/runs/metricsCharts';
import { chartData, overlayKey, X_AXES, type XAxis } from '../../src/runs/metricsOverlay';
import { aMetricsRecord } from '../builders/protocol';

const KEYS = [...new Set(CHARTS.flatMap((chart) => chart.series.map((s) => s.key)))];

/** A run of `iterations` iterations taking `steps` environment steps each. */
function runOf(iterations: number, steps: number): MetricsColumns {
  const records = Array.from({ length: iterations }, (_, i) =>
    aMetricsRecord({
      iteration: i + 1,
      env_steps: (i + 1) * steps,
      'rollout/return': Math.sin(i),
      'eval/memory/success': i % 10 === 0 ? 0.5 : null,
    }),
  );
  return appendRecords(emptyColumns(), records);
}

/** The baseline: every chart key of every run copied into a fresh column, nothing aligned. */
function copyOnly(runs: readonly MetricsColumns[]): number {
  const series: Record<string, (number | null)[]> = {};
  runs.forEach((columns, run) => KEYS.forEach((key) => (series[overlayKey(run, key)] = columns.series[key].slice())));
  return Object.keys(series).length;
}

function timed(run: () => unknown): number {
  const started = performance.now();
  run();
  return performance.now() - started;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

function main(): void {
  const iterations = Number(process.argv[2] ?? 100_000);
  const repeats = Number(process.argv[3] ?? 5);
  // EMPO² and GRPO take different steps per iteration, so on env steps no x is shared.
  const runs = [runOf(iterations, 40), runOf(iterations, 37)];
  const overlay = runs.map((columns, i) => ({ label: `run ${i}`, columns }));
  const frame = (axis: XAxis) => () => {
    const data = chartData(overlay, axis);
    if (data.columns.iterations.length < iterations) {
      throw new Error('rows lost');
    }
  };
  const byIteration: number[] = [];
  const bySteps: number[] = [];
  const copy: number[] = [];
  timed(frame(X_AXES.iteration));
  timed(frame(X_AXES.envSteps));
  timed(() => copyOnly(runs));
  // Alternating, after one warm-up of each, so all see the same machine.
  for (let i = 0; i < repeats; i++) {
    byIteration.push(timed(frame(X_AXES.iteration)));
    bySteps.push(timed(frame(X_AXES.envSteps)));
    copy.push(timed(() => copyOnly(runs)));
  }
  const figures = {
    runs: runs.length,
    iterations_per_run: iterations,
    keys: KEYS.length,
    repeats,
    frame_ms_iteration_axis_median: Number(median(byIteration).toFixed(1)),
    frame_ms_env_steps_axis_median: Number(median(bySteps).toFixed(1)),
    copy_only_ms_median: Number(median(copy).toFixed(1)),
    iteration_axis_over_copy_only: Number((median(byIteration) / median(copy)).toFixed(2)),
    env_steps_axis_over_copy_only: Number((median(bySteps) / median(copy)).toFixed(2)),
  };
  console.log(JSON.stringify(figures));
}

main();
