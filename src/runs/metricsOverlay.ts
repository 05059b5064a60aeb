import { CHARTS, ENV_STEPS_KEY, type ChartSpec, type MetricsColumns, type SeriesSpec } from './metricsCharts';

// What the metrics view draws for one run or several runs overlaid, on either x-axis: the
// columns uPlot reads (one x for every series of a chart) and the charts over them. Pure data
// and functions, shared by the extension and the webview, unit-tested in plain Node.

/** The x-axes the view offers: the run's iterations, or its environment steps (the bench's). */
export const X_AXES = {
  iteration: { id: 'iteration', label: 'iteration', key: undefined },
  envSteps: { id: 'envSteps', label: 'environment steps', key: ENV_STEPS_KEY },
} as const;

export type XAxisId = keyof typeof X_AXES;
export type XAxis = (typeof X_AXES)[XAxisId];

/**
 * One colour per overlaid run (VS Code theme variables, so they follow the theme), in the order
 * the runs were added; an eighth run takes the first colour again.
 */
export const RUN_COLORS: readonly string[] = [
  '--vscode-charts-blue',
  '--vscode-charts-orange',
  '--vscode-charts-green',
  '--vscode-charts-purple',
  '--vscode-charts-red',
  '--vscode-charts-yellow',
  '--vscode-charts-foreground',
];

/**
 * The line of each overlaid run after the first, with its colour: two runs that agree (one
 * config and seed, or the first iterations of two methods) draw one over the other, and a
 * dashed line over a solid one shows both.
 */
export const RUN_DASHES: readonly (readonly number[] | undefined)[] = [undefined, [6, 4], [2, 3], [10, 3, 2, 3]];

export interface OverlayRun {
  /** How the legend names the run (its run id). */
  readonly label: string;
  readonly columns: MetricsColumns;
  /** A branch whose parent is shown too: the parent's index among the runs, and the checkpoint iteration the branch starts from. */
  readonly branchOf?: { readonly run: number; readonly checkpoint: number };
}

/** Aligned columns, and which of them have a value (a chart leaves out the runs without). */
export interface AlignedColumns extends MetricsColumns {
  readonly present: ReadonlySet<string>;
}

export interface ChartData {
  /** x (the axis' values, increasing) and one array per drawn series. */
  readonly columns: MetricsColumns;
  readonly charts: readonly ChartSpec[];
  /** Labels of runs that have no row on the axis (metrics written before env_steps existed). */
  readonly missingAxis: readonly string[];
}

/** The column name of run `run`'s values of `key` in aligned columns. */
export function overlayKey(run: number, key: string): string {
  return `${run}:${key}`;
}

/**
 * Everything the view draws. One run keeps the charts of CHARTS (several series per chart); on
 * the iteration axis those are its own columns, shared and appended in place, as the single-run
 * view always drew them. Several runs get one chart per metric key and one series per run in
 * the run's colour; a run that never recorded the key is left out of that chart, and a chart
 * that no run recorded is left out of the view.
 */
export function chartData(runs: readonly OverlayRun[], axis: XAxis): ChartData {
  if (runs.length === 1 && axis.key === undefined) {
    return { columns: runs[0].columns, charts: CHARTS, missingAxis: [] };
  }
  const keys = [...new Set(CHARTS.flatMap((chart) => chart.series.map((s) => s.key)))];
  const columns = alignRuns(
    runs.map((run) => joinedToParent(run, runs)),
    axis,
    keys,
  );
  const missingAxis = runs.filter((run) => !xOf(run.columns, axis).some((x) => x !== null)).map((run) => run.label);
  if (runs.length === 1) {
    const charts = CHARTS.map((chart) => ({
      ...chart,
      series: chart.series.map((s) => ({ ...s, key: overlayKey(0, s.key) })),
    }));
    return { columns, charts, missingAxis };
  }
  return { columns, charts: overlayCharts(runs, columns), missingAxis };
}

/**
 * One chart per key of CHARTS, one series per run that has a value of it in `columns`. A
 * chart of several series is named by its series first ("memory-free · Mean score by rollout
 * mode"), so a title cut short at a narrow width still says which.
 */
export function overlayCharts(runs: readonly OverlayRun[], columns: AlignedColumns): ChartSpec[] {
  return CHARTS.flatMap((chart) =>
    chart.series.flatMap((s): ChartSpec[] => {
      const series: SeriesSpec[] = runs.flatMap((run, i) =>
        columns.present.has(overlayKey(i, s.key)) ? [runSeries(overlayKey(i, s.key), run.label, i, s.points)] : [],
      );
      if (series.length === 0) {
        return [];
      }
      const title = chart.series.length > 1 ? `${s.label} · ${chart.title}` : chart.title;
      return [{ ...chart, id: `${chart.id}/${s.key}`, title, series }];
    }),
  );
}

/** Keys drawn as points only (evaluations): a branch's line starts at its parent's, its points do not. */
const POINT_KEYS: ReadonlySet<string> = new Set(
  CHARTS.flatMap((chart) => chart.series.filter((s) => s.points).map((s) => s.key)),
);

/**
 * A branch's columns beginning with its parent's row at the checkpoint it starts from, so its
 * line leaves the parent's line where the branch did (a one-iteration branch is a segment from
 * that point, not a lone dot). Lines only (and the x of either axis): an evaluation the branch
 * did not make is not drawn as its point. Other runs, and a branch whose parent has no row at
 * the checkpoint, as they are. A new object: the branch's own columns grow in place.
 */
export function joinedToParent(run: OverlayRun, runs: readonly OverlayRun[]): MetricsColumns {
  if (!run.branchOf) {
    return run.columns;
  }
  const { checkpoint } = run.branchOf;
  const parent = runs[run.branchOf.run]?.columns;
  const row = parent ? parent.iterations.lastIndexOf(checkpoint) : -1;
  const first = run.columns.iterations[0];
  if (!parent || row < 0 || (first !== undefined && first <= checkpoint)) {
    return run.columns;
  }
  const series: Record<string, (number | null)[]> = {};
  for (const [key, values] of Object.entries(run.columns.series)) {
    series[key] = [POINT_KEYS.has(key) ? null : (parent.series[key]?.[row] ?? null), ...values];
  }
  return { iterations: [checkpoint, ...run.columns.iterations], series };
}

/** Run `index`'s series of one key: its colour, and its dash unless the key is drawn as points. */
function runSeries(key: string, label: string, index: number, points: boolean | undefined): SeriesSpec {
  const color = RUN_COLORS[index % RUN_COLORS.length];
  const dash = RUN_DASHES[index % RUN_DASHES.length];
  return points ? { key, label, color, points } : { key, label, color, ...(dash ? { dash } : {}) };
}

/**
 * Several runs' columns on one x: the sorted union of the runs' x values on `axis`, and for each
 * run and key a column with the run's value at its own x and null at the other runs' (uPlot
 * bridges those gaps in a line; points stay points). A row without an x on the axis (no
 * env_steps) is left out; of two rows of one run at the same x, the later value is drawn.
 */
export function alignRuns(runs: readonly MetricsColumns[], axis: XAxis, keys: readonly string[]): AlignedColumns {
  const { union, positions } = mergeX(runs.map((columns) => xOf(columns, axis)));
  const series: Record<string, (number | null)[]> = {};
  const present = new Set<string>();
  // Copying a column of nulls is cheaper than filling a new one, 50 times per frame.
  const gaps: (number | null)[] = new Array<number | null>(union.length).fill(null);
  runs.forEach((columns, run) => {
    const at = positions[run];
    for (const key of keys) {
      const from = columns.series[key] ?? [];
      const into = gaps.slice();
      let any = false;
      for (let row = 0; row < at.length; row++) {
        const value = from[row] ?? null;
        if (at[row] >= 0 && value !== null) {
          into[at[row]] = value;
          any = true;
        }
      }
      series[overlayKey(run, key)] = into;
      if (any) {
        present.add(overlayKey(run, key));
      }
    }
  });
  return { iterations: union, series, present };
}

/**
 * The sorted union of several runs' x values, and where each run's rows land in it (−1: no x).
 * A run's x is increasing (iterations always, env_steps as a run counts them), so the runs are
 * merged in one pass; a run whose x is not gets sorted first. Once per frame of a live overlay
 * of 100,000-iteration runs: test/benchmarks/metricsOverlay.bench.ts.
 */
function mergeX(xs: readonly (readonly (number | null)[])[]): { union: number[]; positions: Int32Array[] } {
  // Each run's rows that have an x, in increasing x (ties keep row order, so the later row wins).
  const orders = xs.map((values) => {
    const rows: number[] = [];
    let sorted = true;
    for (let row = 0; row < values.length; row++) {
      const x = values[row];
      if (x !== null) {
        sorted &&= rows.length === 0 || (values[rows[rows.length - 1]] as number) <= x;
        rows.push(row);
      }
    }
    return sorted ? rows : rows.sort((a, b) => (values[a] as number) - (values[b] as number) || a - b);
  });
  const positions = xs.map((values) => new Int32Array(values.length).fill(-1));
  const union: number[] = [];
  const heads = orders.map(() => 0);
  for (;;) {
    let next = Infinity;
    orders.forEach((rows, run) => {
      if (heads[run] < rows.length) {
        next = Math.min(next, xs[run][rows[heads[run]]] as number);
      }
    });
    if (next === Infinity) {
      return { union, positions };
    }
    union.push(next);
    orders.forEach((rows, run) => {
      while (heads[run] < rows.length && xs[run][rows[heads[run]]] === next) {
        positions[run][rows[heads[run]]] = union.length - 1;
        heads[run]++;
      }
    });
  }
}

/** A run's x on the axis, row by row: its iterations, or its env_steps (null where absent). */
function xOf(columns: MetricsColumns, axis: XAxis): readonly (number | null)[] {
  return axis.key === undefined ? columns.iterations : (columns.series[axis.key] ?? columns.iterations.map(() => null));
}

/**
 * The legend's names of the shown runs: each run's id, and where two runs share one (folders of
 * two roots), its folder too, so no two series of a chart read the same.
 */
export function runLabels(runs: readonly { readonly runId: string; readonly path?: string }[]): string[] {
  return runs.map((run) =>
    runs.filter((other) => other.runId === run.runId).length > 1 && run.path ? `${run.runId} (${run.path})` : run.runId,
  );
}
