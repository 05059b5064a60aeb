// How long the metrics panel takes to turn 100,000 metrics records into chart columns
// (appendRecords, src/runs/metricsCharts.ts): what opening a long run's metrics costs before a
// chart draws. Prints milliseconds and a ratio against a baseline measured in the same run, the
// same records pushed into the same columns by a plain loop with no ordering or roll-back checks,
// so the ratio says what those checks add whatever the machine's load.
//
//   npm run bench:metrics            # or: node out/tests/test/benchmarks/metricsAppend.bench.js [iterations] [repeats]
//
// The unit test (test/unit/metricsCharts.unit.test.ts) checks what the append does; this
// measures how fast.
import { appendRecords, CHART_KEYS, emptyColumns, type MetricsColumns } from '../../src/runs/metricsCharts';
import type { MetricsRecord } from '../../src/rpc/protocol';
import { aMetricsRecord } from '../builders/protocol';

/** The baseline: every value of every chart key pushed, no ordering or roll-back checks. */
function pushOnly(records: readonly MetricsRecord[]): MetricsColumns {
  const columns = emptyColumns();
  for (const record of records) {
    columns.iterations.push(record.iteration);
    for (const key of CHART_KEYS) {
      columns.series[key].push((record[key] as number | undefined) ?? null);
    }
  }
  return columns;
}

function timed(run: () => MetricsColumns): number {
  const started = performance.now();
  const columns = run();
  const ms = performance.now() - started;
  if (columns.iterations.length === 0) {
    throw new Error('nothing appended');
  }
  return ms;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

function main(): void {
  const iterations = Number(process.argv[2] ?? 100_000);
  const repeats = Number(process.argv[3] ?? 7);
  const records = Array.from({ length: iterations }, (_, i) =>
    aMetricsRecord({
      iteration: i + 1,
      'rollout/return': Math.sin(i),
      'update/ratio_max': 1 + (i % 7),
      'eval/memory/success': i % 10 === 0 ? 0.5 : null,
    }),
  );
  const append: number[] = [];
  const floor: number[] = [];
  // Alternating, after one warm-up of each, so both see the same machine.
  timed(() => appendRecords(emptyColumns(), records));
  timed(() => pushOnly(records));
  for (let i = 0; i < repeats; i++) {
    append.push(timed(() => appendRecords(emptyColumns(), records)));
    floor.push(timed(() => pushOnly(records)));
  }
  const figures = {
    iterations,
    keys: CHART_KEYS.length,
    repeats,
    append_ms_median: Number(median(append).toFixed(1)),
    append_ms_max: Number(Math.max(...append).toFixed(1)),
    push_only_ms_median: Number(median(floor).toFixed(1)),
    append_over_push_only: Number((median(append) / median(floor)).toFixed(2)),
    append_us_per_iteration: Number(((1000 * median(append)) / iterations).toFixed(3)),
  };
  console.log(JSON.stringify(figures));
}

main();
