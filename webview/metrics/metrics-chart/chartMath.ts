import { fixed } from '../../../src/common/quantities';
import type { ChartSpec, MetricsColumns } from '../../../src/runs/metricsCharts';

// What a metrics chart shows, as pure functions (unit-tested in plain Node): the axis ranges and
// tick labels, which points get a marker and which shape, the header's readings. The chart
// element (metrics-chart.ts) hands these to uPlot.

export type Range = readonly [min: number, max: number];
type Values = ArrayLike<number | null | undefined>;

/** A one-value x axis (one iteration) gets a band around the value, not a 0-wide range. */
export function spanRange(min: number, max: number): Range {
  if (min === max) {
    const pad = min === 0 ? 1 : Math.abs(min) * 0.1;
    return [min - pad, max + pad];
  }
  return [min, max];
}

/**
 * The narrowest y axis, as a share of its values' size. Values closer together than that (a
 * masked-token fraction whose sums differ by 1e-11 from one iteration to the next) are drawn in
 * a band this wide around their middle, so floating-point noise reads as a flat line, not as a
 * steep slope; and tick labels need no more than three or four significant digits.
 */
export const LEAST_SPAN_SHARE = 0.05;
/** Values all smaller than this are 0 to a chart (float noise around 0): the axis is −1..1. */
const NEGLIGIBLE = 1e-9;

/** The y range of values from `min` to `max`: the data, widened to the least span around it. */
export function valueRange(min: number, max: number): Range {
  const size = Math.max(Math.abs(min), Math.abs(max));
  if (size < NEGLIGIBLE) {
    return [-1, 1];
  }
  const least = LEAST_SPAN_SHARE * size;
  if (max - min >= least) {
    return [min, max];
  }
  const middle = (min + max) / 2;
  return [middle - least / 2, middle + least / 2];
}

/** The least width of the y axis (CSS px), so the plots of charts side by side line up. */
export const Y_AXIS_WIDTH = 56;
/** Room beside a tick label for the tick and the gap to it (uPlot's defaults, 10 + 5), and a pixel. */
const TICK_ROOM = 16;

/** The y axis' width that shows its widest tick label whole (`measure`: the label's width in CSS px). */
export function axisWidth(labels: readonly (string | null)[], measure: (label: string) => number): number {
  const widest = Math.max(0, ...labels.map((label) => (label ? measure(label) : 0)));
  return Math.max(Y_AXIS_WIDTH, Math.ceil(widest + TICK_ROOM));
}

/**
 * Tick labels that never repeat: as many decimals as the tick step needs, more while two labels
 * still read the same (uPlot's default formatter keeps at most 3 decimals, so ticks 0.0025 and
 * 0.003 both read "0.003"). Very large or very small ticks are written in exponent form.
 */
export function tickLabels(splits: readonly (number | null)[], step: number): string[] {
  const finite = splits.filter((v): v is number => v !== null && Number.isFinite(v));
  const largest = Math.max(0, ...finite.map(Math.abs));
  const exponent = largest >= 1e6 || (step > 0 && step < 1e-5);
  let digits = exponent ? 1 : step > 0 ? Math.max(0, Math.ceil(-Math.log10(step) - 1e-9)) : 0;
  const write = (v: number) => (exponent ? v.toExponential(digits) : fixed(v, digits));
  for (; digits < 15; digits++) {
    const labels = finite.map(write);
    if (new Set(labels).size === labels.length) {
      break;
    }
  }
  return splits.map((v) => (v === null || !Number.isFinite(v) ? '' : normaliseZero(write(v))));
}

function normaliseZero(label: string): string {
  return /^-0(\.0*)?(e\+?0)?$/.test(label) ? label.slice(1) : label;
}

/** At most this many values are sorted for the quantiles (a 100,000-iteration run is strided). */
const QUANTILE_SAMPLE = 4_096;
/** How far beyond the quartiles a value may lie before it is clipped: Tukey's "far out" fence. */
const FENCE = 3;

export interface Fences {
  readonly low: number;
  readonly high: number;
}

/**
 * Tukey's far-out fences of a chart's values, Q1 − 3·IQR and Q3 + 3·IQR, from a strided sample.
 * The spread is at least 5% of the quartiles' size, so a run of equal values with one real
 * wobble keeps the wobble. Undefined with fewer than 4 values (too few to call one an outlier).
 */
export function fencesOf(series: readonly Values[]): Fences | undefined {
  const stride = Math.max(1, Math.ceil(series.reduce((sum, values) => sum + values.length, 0) / QUANTILE_SAMPLE));
  const sample: number[] = [];
  let position = 0;
  for (const values of series) {
    for (let i = 0; i < values.length; i++, position++) {
      const v = values[i];
      if (typeof v === 'number' && Number.isFinite(v) && position % stride === 0) {
        sample.push(v);
      }
    }
  }
  if (sample.length < 4) {
    return undefined;
  }
  sample.sort((a, b) => a - b);
  const q1 = quantile(sample, 0.25);
  const q3 = quantile(sample, 0.75);
  const spread = Math.max(q3 - q1, 0.05 * Math.max(Math.abs(q1), Math.abs(q3)), 1e-12);
  return { low: q1 - FENCE * spread, high: q3 + FENCE * spread };
}

/** The smallest and largest finite value of rows `from` on. */
export function extremes(series: readonly Values[], from = 0): Range {
  let min = Infinity;
  let max = -Infinity;
  for (const values of series) {
    for (let i = from; i < values.length; i++) {
      const v = values[i];
      if (typeof v === 'number' && Number.isFinite(v)) {
        min = v < min ? v : min;
        max = v > max ? v : max;
      }
    }
  }
  return [min, max];
}

/** The data's range cut at the fences; undefined when nothing lies beyond them. */
export function clippedRange(fences: Fences | undefined, [min, max]: Range): Range | undefined {
  if (!fences) {
    return undefined;
  }
  const low = Math.max(min, fences.low);
  const high = Math.min(max, fences.high);
  return low === min && high === max ? undefined : [low, high];
}

/**
 * The y range of a chart whose outliers would flatten it (importance ratios: one spike of 800
 * over means near 1): the data's range cut at the far-out fences (fencesOf).
 */
export function robustRange(series: readonly Values[]): Range | undefined {
  return clippedRange(fencesOf(series), extremes(series));
}

/**
 * robustRange of columns that grow by a row per iteration, without re-reading 100,000 rows on
 * every live update: the fences are recomputed when the rows grew by 1% (or were replaced or
 * rolled back), the extremes follow every new row.
 */
export class RobustAxis {
  private fences: Fences | undefined;
  private extent: Range = [Infinity, -Infinity];
  private rowsAtFences = -1;
  private rowsSeen = 0;
  private source: unknown;

  update(source: unknown, series: readonly Values[], rows: number): Range | undefined {
    if (source !== this.source || rows < this.rowsSeen || rows > this.rowsAtFences * 1.01 + 8) {
      this.source = source;
      this.fences = fencesOf(series);
      this.extent = extremes(series);
      this.rowsAtFences = rows;
    } else if (rows > this.rowsSeen) {
      const [min, max] = extremes(series, this.rowsSeen);
      this.extent = [Math.min(this.extent[0], min), Math.max(this.extent[1], max)];
    }
    this.rowsSeen = rows;
    return clippedRange(this.fences, this.extent);
  }
}

function quantile(sorted: readonly number[], q: number): number {
  const at = (sorted.length - 1) * q;
  const below = Math.floor(at);
  const above = Math.min(sorted.length - 1, below + 1);
  return sorted[below] + (sorted[above] - sorted[below]) * (at - below);
}

export interface Beyond {
  /** Indices of values above the axis, and below it. */
  readonly above: number[];
  readonly below: number[];
}

/** The points a clipped axis leaves out, each drawn as a marker at the edge it crosses. */
export function beyondAxis(values: Values, range: Range, from = 0, to = values.length - 1): Beyond {
  const above: number[] = [];
  const below: number[] = [];
  for (let i = Math.max(0, from); i <= Math.min(values.length - 1, to); i++) {
    const v = values[i];
    if (typeof v === 'number' && Number.isFinite(v)) {
      if (v > range[1]) {
        above.push(i);
      } else if (v < range[0]) {
        below.push(i);
      }
    }
  }
  return { above, below };
}

/**
 * Whether a series' points get markers: always when the window holds a single value (a line
 * through one point draws nothing, so after the first iteration the chart looked empty), else
 * when they are at least `spacing` pixels apart on average.
 */
export function showPoints(values: Values, from: number, to: number, widthPx: number, spacing: number): boolean {
  let present = 0;
  for (let i = Math.max(0, from); i <= Math.min(values.length - 1, to) && present < 2; i++) {
    if (typeof values[i] === 'number') {
      present++;
    }
  }
  return present <= 1 || (to - from) * spacing <= widthPx;
}

export interface Marker {
  /** Diameter in CSS pixels. */
  readonly size: number;
  /** Outline width in CSS pixels. */
  readonly width: number;
  readonly filled: boolean;
}

/**
 * The marker of the n-th points-only series of a chart: a filled dot, then rings around it, each
 * ring's inside wider than the marker before it, so equal values of two series (both
 * evaluations at 1.0) show as a dot in a ring rather than one hiding the other.
 */
export function markerOf(index: number): Marker {
  if (index === 0) {
    return { size: 5, width: 1, filled: true };
  }
  return { size: 5 + 6 * index, width: 1.5, filled: false };
}

export interface Reading {
  readonly label: string;
  /** The value in that iteration; undefined when the series has none there. */
  readonly value: number | undefined;
  /** For a series absent in that iteration: its latest earlier value and where it was. */
  readonly earlier?: { readonly iteration: number; readonly value: number };
}

export interface Readings {
  readonly iteration: number;
  readonly readings: readonly Reading[];
}

/**
 * The header of a chart: every series' value in one iteration, the latest that has any of them.
 * A series not recorded in that iteration (the other rollout mode; no evaluation this time)
 * names its own latest value with its iteration, never passing it off as this one's.
 */
export function latestReadings(spec: ChartSpec, columns: MetricsColumns): Readings | undefined {
  return readingsAt(spec, columns, columns.iterations.length - 1);
}

/**
 * The readings of the row `at` (the iteration under the cursor) or, where no series has a value
 * there, of the nearest earlier row that has one; undefined before any.
 */
export function readingsAt(spec: ChartSpec, columns: MetricsColumns, at: number): Readings | undefined {
  const series = spec.series.map((s) => columns.series[s.key] ?? []);
  const row = lastRow(series, Math.min(at, columns.iterations.length - 1));
  if (row === undefined) {
    return undefined;
  }
  return {
    iteration: columns.iterations[row],
    readings: spec.series.map((s, i) => {
      const value = series[i][row];
      if (typeof value === 'number') {
        return { label: s.label, value };
      }
      const before = lastRow([series[i]], row - 1);
      return before === undefined
        ? { label: s.label, value: undefined }
        : {
            label: s.label,
            value: undefined,
            earlier: { iteration: columns.iterations[before], value: series[i][before] as number },
          };
    }),
  };
}

/** Whether any series of the chart has a value: a chart without one draws no axes. */
export function hasData(spec: ChartSpec, columns: MetricsColumns): boolean {
  return spec.series.some((s) => (columns.series[s.key] ?? []).some((v) => typeof v === 'number'));
}

/** A reading's value as the header writes it: "25.0", "–" (none), "– (20.0 at 7)" (an earlier one). */
export function readingValue(reading: Reading, format: (value: number) => string = formatValue): string {
  if (reading.value !== undefined) {
    return format(reading.value);
  }
  return reading.earlier ? `– (${format(reading.earlier.value)} at ${reading.earlier.iteration})` : '–';
}

function lastRow(series: readonly Values[], from: number): number | undefined {
  for (let i = from; i >= 0; i--) {
    if (series.some((values) => typeof values[i] === 'number')) {
      return i;
    }
  }
  return undefined;
}

/**
 * A value in a header or legend: whole numbers as they are, else 0 decimals from 100, 1 from 10,
 * 2 from 1 (a mean score reads as the tree writes it), 3 below, exponent form for extremes.
 */
export function formatValue(value: number): string {
  const magnitude = Math.abs(value);
  if (Number.isInteger(value) && magnitude < 1e5) {
    return String(value); // a count of tips, a score of 25: no trailing zeros
  }
  if (magnitude !== 0 && (magnitude >= 1e5 || magnitude < 1e-3)) {
    return value.toExponential(2);
  }
  return fixed(value, magnitude >= 100 ? 0 : magnitude >= 10 ? 1 : magnitude >= 1 ? 2 : 3);
}

/**
 * The header text of `readings`: "iteration 8 · all rollouts 25.0 · with memory – (20.0 at 7)";
 * `xLabel` names the x ("environment steps 1200 · …" on that axis).
 */
export function readingsText(
  readings: Readings | undefined,
  format: (value: number) => string = formatValue,
  xLabel = 'iteration',
): string {
  if (!readings) {
    return '';
  }
  const parts = readings.readings.map((r) => `${r.label} ${readingValue(r, format)}`);
  return [`${xLabel} ${readings.iteration}`, ...parts].join(' · ');
}

/** What a clipped axis leaves out (beyondAxis of each series), said in the header: "▲ 2 points above the axis (up to 800)". */
export function clipNote(series: readonly Values[], beyond: readonly Beyond[]): string {
  let above = 0;
  let below = 0;
  let highest = -Infinity;
  let lowest = Infinity;
  beyond.forEach((b, s) => {
    above += b.above.length;
    below += b.below.length;
    b.above.forEach((i) => (highest = Math.max(highest, series[s][i] as number)));
    b.below.forEach((i) => (lowest = Math.min(lowest, series[s][i] as number)));
  });
  const points = (n: number) => `${n} point${n === 1 ? '' : 's'}`;
  const parts = [
    ...(above ? [`▲ ${points(above)} above the axis (up to ${formatValue(highest)})`] : []),
    ...(below ? [`▼ ${points(below)} below it (down to ${formatValue(lowest)})`] : []),
  ];
  return parts.join(', ');
}
