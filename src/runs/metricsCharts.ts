import { formatReturn, SCORE, SCORE_SCALE, SHARE_SCALE } from '../common/quantities';
import type { MetricsRecord } from '../rpc/protocol';

// Which charts the metrics panel draws and which metrics.jsonl keys feed them (names:
// docs/run-folder.md), shared by the extension (which ships only these columns to the webview)
// and the webview (which draws them). Pure data and functions, unit-tested in plain Node.

export interface SeriesSpec {
  readonly key: string;
  readonly label: string;
  /** A VS Code theme colour variable, so the charts follow the theme. */
  readonly color: string;
  /** Points only (sparse metrics such as evaluations, written every few iterations). */
  readonly points?: boolean;
  /** A dashed line (CSS px of dash and gap): an overlaid run, so equal runs stay told apart. */
  readonly dash?: readonly number[];
}

export interface ChartSpec {
  readonly id: string;
  readonly title: string;
  readonly series: readonly SeriesSpec[];
  /** The unit or scale, shown beside the title. */
  readonly unit?: string;
  /**
   * Outliers would flatten the chart (one importance ratio of 800 over means near 1): the axis
   * is clipped at a robust range and points beyond it get a marker at the edge (chartMath.ts).
   */
  readonly clipOutliers?: boolean;
  /** How the header and legend write a value (default chartMath.formatValue). */
  readonly format?: (value: number) => string;
}

export const CHARTS: readonly ChartSpec[] = [
  {
    id: 'return',
    // The mean final score, under the name the tree and the episode view give it.
    title: `Mean ${SCORE} by rollout mode`,
    unit: SCORE_SCALE,
    format: formatReturn, // as the tree and the status bar write a score
    series: [
      // All rollouts first: each iteration has one mode, so its line is always one of the
      // other two, which are drawn over it in their mode's colour.
      { key: 'rollout/return', label: 'all rollouts', color: '--vscode-charts-foreground' },
      { key: 'rollout/memory_free/return', label: 'memory-free', color: '--vscode-charts-blue' },
      { key: 'rollout/memory/return', label: 'with memory', color: '--vscode-charts-orange' },
    ],
  },
  {
    id: 'success',
    // Short enough for one line beside the iteration at a default panel width; the series say
    // which evaluation.
    title: 'Success: evaluation and training',
    unit: SHARE_SCALE,
    series: [
      { key: 'eval/memory_free/success', label: 'eval memory-free', color: '--vscode-charts-blue', points: true },
      { key: 'eval/memory/success', label: 'eval with memory', color: '--vscode-charts-orange', points: true },
      { key: 'rollout/success', label: 'training rollouts', color: '--vscode-charts-green' },
    ],
  },
  {
    id: 'masked',
    title: 'Masked-token fraction',
    unit: SHARE_SCALE,
    series: [{ key: 'update/masked_fraction', label: 'masked', color: '--vscode-charts-red' }],
  },
  {
    id: 'ratio',
    title: 'Importance ratios',
    unit: 'π_θ/π_old',
    clipOutliers: true,
    series: [
      { key: 'update/ratio_mean', label: 'mean', color: '--vscode-charts-blue' },
      { key: 'update/ratio_min', label: 'min', color: '--vscode-charts-green' },
      { key: 'update/ratio_max', label: 'max', color: '--vscode-charts-red' },
    ],
  },
  {
    id: 'clip',
    title: 'Clip fraction',
    unit: SHARE_SCALE,
    series: [
      { key: 'update/clip_fraction', label: 'clipped', color: '--vscode-charts-purple' },
      { key: 'update/dual_clip_fraction', label: 'dual-clipped', color: '--vscode-charts-yellow' },
    ],
  },
  {
    id: 'entropy',
    title: 'Entropy',
    unit: 'nats per token',
    series: [{ key: 'update/entropy', label: 'entropy', color: '--vscode-charts-green' }],
  },
  {
    id: 'kl',
    // Sample estimates: to the old policy, mean(log π_old − log π_θ) over the tokens (k1), which
    // dips below 0 when the sampled tokens gained probability; to the reference, the run's penalty.
    title: 'KL estimate',
    unit: 'per token',
    series: [
      { key: 'update/kl', label: 'to reference', color: '--vscode-charts-red' },
      { key: 'update/approx_kl_old', label: 'to old policy', color: '--vscode-charts-purple' },
    ],
  },
  {
    id: 'tips',
    title: 'Tips in memory',
    series: [{ key: 'memory/tips', label: 'tips', color: '--vscode-charts-yellow' }],
  },
  {
    id: 'intrinsic',
    title: 'Intrinsic reward',
    unit: 'mean per step',
    series: [{ key: 'reward/intrinsic', label: 'intrinsic', color: '--vscode-charts-orange' }],
  },
  // What explains learning: each is written only by iterations that have it.
  {
    id: 'mode-success',
    title: 'Success by rollout mode',
    unit: SHARE_SCALE,
    series: [
      {
        key: 'rollout/memory_free/success',
        label: 'memory-free rollouts',
        color: '--vscode-charts-blue',
        points: true,
      },
      { key: 'rollout/memory/success', label: 'memory rollouts', color: '--vscode-charts-orange', points: true },
    ],
  },
  {
    id: 'success-tips',
    title: 'Memory steps shown a success tip',
    unit: SHARE_SCALE,
    series: [{ key: 'memory/success_tip_share', label: 'success tips', color: '--vscode-charts-yellow', points: true }],
  },
  {
    id: 'off-policy',
    title: 'Off-policy updates',
    clipOutliers: true,
    series: [
      { key: 'update/off_policy/masked_fraction', label: 'masked share', color: '--vscode-charts-red', points: true },
      { key: 'update/off_policy/ratio_mean', label: 'ratio mean', color: '--vscode-charts-blue', points: true },
      { key: 'update/off_policy/ratio_max', label: 'ratio max', color: '--vscode-charts-purple', points: true },
    ],
  },
  {
    id: 'intrinsic-share',
    // Where GRPO's signal comes from, and where there is none: a group whose returns are all
    // equal has advantage 0 (a policy that fails every rollout alike cannot learn its way out).
    title: 'Advantage signal',
    unit: SHARE_SCALE,
    series: [
      {
        key: 'reward/intrinsic_advantage_share',
        label: 'novelty share of |advantage|',
        color: '--vscode-charts-orange',
      },
      { key: 'reward/flat_group_share', label: 'groups without signal', color: '--vscode-charts-red', points: true },
    ],
  },
  {
    id: 'throughput',
    title: 'Throughput',
    unit: 'tokens/s',
    series: [
      { key: 'throughput/rollout_tokens_per_s', label: 'rollout', color: '--vscode-charts-blue' },
      { key: 'throughput/update_tokens_per_s', label: 'update', color: '--vscode-charts-green' },
    ],
  },
];

/**
 * Environment steps the run has taken so far, this iteration included (metric-keys.json): the x
 * of the metrics view's second axis, at which the bench compares runs of different methods.
 */
export const ENV_STEPS_KEY = 'env_steps';

/** The keys shipped to the webview: every chart's, and the environment steps for the x-axis. */
export const CHART_KEYS: readonly string[] = [
  ...new Set([ENV_STEPS_KEY, ...CHARTS.flatMap((chart) => chart.series.map((s) => s.key))]),
];

/**
 * Metrics in columns: x (iterations, increasing) and one array per key, null where absent. The
 * columns a chart draws from several runs (metricsOverlay.ts) hold the chosen axis' x here.
 */
export interface MetricsColumns {
  readonly iterations: number[];
  readonly series: Record<string, (number | null)[]>;
}

export function emptyColumns(keys: readonly string[] = CHART_KEYS): MetricsColumns {
  return { iterations: [], series: Object.fromEntries(keys.map((key) => [key, []])) };
}

/**
 * Appends records to columns in place (x must increase: a record for an iteration already
 * present replaces that row, as after a resumed run rolled back). Returns the columns.
 */
export function appendRecords(columns: MetricsColumns, records: readonly MetricsRecord[]): MetricsColumns {
  const keys = Object.keys(columns.series);
  for (const record of records) {
    const x = record.iteration;
    if (typeof x !== 'number') {
      continue;
    }
    const last = columns.iterations.length - 1;
    if (last >= 0 && x <= columns.iterations[last]) {
      // A rolled-back iteration reappears: cut everything from it on, then append.
      let cut = last;
      while (cut >= 0 && columns.iterations[cut] >= x) {
        cut--;
      }
      columns.iterations.length = cut + 1;
      for (const key of keys) {
        columns.series[key].length = cut + 1;
      }
    }
    columns.iterations.push(x);
    for (const key of keys) {
      const value = record[key];
      columns.series[key].push(typeof value === 'number' && Number.isFinite(value) ? value : null);
    }
  }
  return columns;
}

/**
 * Appends columns (new iterations of a run, as the webview receives them) to a run's columns in
 * place, the same way appendRecords does: a re-sent iteration replaces the rows from it on.
 * Keys the new columns lack get null. Returns `into`.
 */
export function appendColumns(into: MetricsColumns, columns: MetricsColumns): MetricsColumns {
  const keys = Object.keys(into.series);
  const x = columns.iterations;
  for (let i = 0; i < x.length; i++) {
    let end = into.iterations.length;
    while (end > 0 && into.iterations[end - 1] >= x[i]) {
      end--;
    }
    if (end !== into.iterations.length) {
      into.iterations.length = end;
      for (const key of keys) {
        into.series[key].length = end;
      }
    }
    into.iterations.push(x[i]);
    for (const key of keys) {
      into.series[key].push(columns.series[key]?.[i] ?? null);
    }
  }
  return into;
}

/** Parses metrics.jsonl text (a finished run read from disk, no host); bad lines are skipped. */
export function parseMetricsJsonl(text: string): MetricsRecord[] {
  const records: MetricsRecord[] = [];
  for (const line of text.split('\n')) {
    if (!line.trim()) {
      continue;
    }
    try {
      const record = JSON.parse(line) as MetricsRecord;
      if (typeof record?.iteration === 'number') {
        records.push(record);
      }
    } catch {
      // A torn last line after a kill: skip it, as the host does.
    }
  }
  return records;
}
