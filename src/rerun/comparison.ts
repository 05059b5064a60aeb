import type { RerunResult, RerunTipEdit } from '../rpc/protocol';
import { changeDirection, differenceInterval } from './successInterval';

// The rows the comparison view shows of what a rerun or dry run reports (RerunResult, in the
// run folder's snake_case; docs/run-folder.md). No vscode import: the unit tests and the webview
// use these functions as they are.

export interface ComparisonRow {
  readonly variation: string;
  readonly chosen: boolean;
  /** Memory-free success, 0..1. */
  readonly before: number;
  readonly after: number | null;
  readonly change: number | null;
  /** Episodes played per side (the rerun's eval_episodes). */
  readonly episodes: number;
  /** The change's 95% interval (successInterval.ts); null without an "after". */
  readonly interval: readonly [number, number] | null;
  /** A gain or loss only when the interval excludes zero. */
  readonly direction: 'up' | 'down' | 'unclear';
}

export interface EpisodeRow {
  readonly id: string;
  readonly variation: string;
  readonly success: boolean;
  readonly steps: number;
  readonly before: number | null;
  readonly after: number | null;
}

/** Everything the comparison view draws, embedded in its HTML so first paint has it. */
export interface ComparisonView {
  readonly title: string;
  readonly dryRun: boolean;
  readonly status: string;
  readonly checkpoint: number;
  readonly rows: readonly ComparisonRow[];
  readonly episodes: readonly EpisodeRow[];
  /** Every person's edit in the memory the rerun used, whenever it was made. */
  readonly tips: readonly RerunTipEdit[];
  /** Name → value lines under the table: loss, masked fraction, KL, ratios. */
  readonly facts: readonly (readonly [string, string])[];
}

export function comparisonView(record: RerunResult): ComparisonView {
  const n = record.settings.eval_episodes;
  const rows: ComparisonRow[] = record.dry_run
    ? Object.entries(record.before).map(([variation, v]) => ({
        variation,
        chosen: record.variations.includes(variation),
        before: v.success,
        after: null,
        change: null,
        episodes: n,
        interval: null,
        direction: 'unclear' as const,
      }))
    : record.comparison.map((c) => {
        const interval = c.after === null ? null : differenceInterval(c.before, n, c.after, n);
        return {
          variation: c.variation,
          chosen: c.chosen,
          before: c.before,
          after: c.after,
          change: c.after === null ? null : c.after - c.before,
          episodes: n,
          interval,
          direction: changeDirection(interval),
        };
      });
  const episodes: EpisodeRow[] = record.episodes.map((e) => ({
    id: e.id,
    variation: e.variation,
    success: e.success,
    steps: e.tip_guided_steps,
    before: e.logprob_before,
    after: e.logprob_after ?? null,
  }));
  return {
    title: record.dry_run
      ? `Dry run of ${record.run} at checkpoint ${record.checkpoint}`
      : `${record.branch} vs ${record.parent} at checkpoint ${record.checkpoint}`,
    dryRun: record.dry_run,
    status: record.dry_run ? 'finished' : record.status,
    checkpoint: record.checkpoint,
    rows,
    episodes,
    // By variation; within one, in the order they were made (the sort is stable).
    tips: [...record.tips].sort((a, b) => (a.variation_key ?? '').localeCompare(b.variation_key ?? '')),
    facts: facts(record),
  };
}

function facts(record: RerunResult): [string, string][] {
  const out: [string, string][] = [];
  if (record.dry_run && record.loss !== null) {
    out.push(['loss (no step taken)', record.loss.toFixed(4)]);
  }
  if (record.dry_run && record.masked_fraction !== null) {
    out.push(['masked tokens', percent(record.masked_fraction)]);
  }
  const ratios = record.dry_run ? record.ratios.flatMap((r) => r.ratios) : [];
  if (ratios.length) {
    out.push([
      'importance ratio π(a|s,u) / π(a|s,u,tips)',
      `mean ${mean(ratios).toFixed(3)}, min ${Math.min(...ratios).toFixed(3)}, max ${Math.max(...ratios).toFixed(3)} over ${ratios.length} tokens`,
    ]);
  }
  if (!record.dry_run && record.updates.length) {
    const last = record.updates[record.updates.length - 1];
    out.push([
      'updates',
      `${record.updates.length} iteration(s), last loss ${fixed(last.loss)}, masked ${last.masked_fraction === undefined ? '—' : percent(last.masked_fraction)}`,
    ]);
  }
  if (record.kl_to_checkpoint !== null) {
    out.push(['KL to the checkpoint', record.kl_to_checkpoint.toExponential(2)]);
  }
  return out;
}

/** 0.375 → "37.5%"; null → "—". */
export function percent(value: number | null | undefined): string {
  return value === null || value === undefined ? '—' : `${(100 * value).toFixed(1).replace(/\.0$/, '')}%`;
}

/** A change of success in points: +25 pts, −12.5 pts, ±0 pts. */
export function points(change: number | null): string {
  if (change === null) {
    return '—';
  }
  const value = Math.round(1000 * change) / 10;
  return value === 0 ? '±0 pts' : `${value > 0 ? '+' : '−'}${Math.abs(value)} pts`;
}

/** A change with its interval and episode counts: "+37.5 pts [−9, +70] · 8 vs 8 episodes". */
export function changeWithInterval(row: Pick<ComparisonRow, 'change' | 'interval' | 'episodes'>): string {
  if (row.change === null || !row.interval) {
    return points(row.change);
  }
  const bound = (x: number) => {
    const v = Math.round(100 * x);
    return v === 0 ? '0' : `${v > 0 ? '+' : '−'}${Math.abs(v)}`;
  };
  return `${points(row.change)} [${bound(row.interval[0])}, ${bound(row.interval[1])}] · ${row.episodes} vs ${row.episodes} episodes`;
}

function fixed(value: number | undefined): string {
  return value === undefined ? '—' : value.toFixed(4);
}

function mean(values: readonly number[]): number {
  return values.reduce((a, b) => a + b, 0) / values.length;
}

/** The chart's columns: x = row index, before and after in percent (uPlot's data layout). */
export function chartData(view: ComparisonView): [number[], number[], (number | null)[]] {
  return [
    view.rows.map((_, i) => i),
    view.rows.map((r) => 100 * r.before),
    view.rows.map((r) => (r.after === null ? null : 100 * r.after)),
  ];
}
