import { LitElement, html, nothing, type PropertyValues, type TemplateResult } from 'lit';
import { customElement, property } from 'lit/decorators.js';
import uPlot from 'uplot';
import { CHARTS, type ChartSpec, type MetricsColumns, type SeriesSpec } from '../../../src/runs/metricsCharts';
import {
  axisWidth,
  beyondAxis,
  clipNote,
  formatValue,
  hasData,
  latestReadings,
  markerOf,
  readingsAt,
  readingsText,
  readingValue,
  RobustAxis,
  showPoints,
  spanRange,
  tickLabels,
  valueRange,
  type Range,
  type Readings,
} from './chartMath';
import { metricsChartStyles } from './metrics-chart.styles';

const HEIGHT = 180;
/** Reading lines every header keeps room for (the most series a chart has), so the plots of a row line up. */
const READING_LINES = Math.max(...CHARTS.map((chart) => chart.series.length));
/** Tick steps of the x-axis, whole numbers (iterations, environment steps) up to 5·10⁹. */
const WHOLE_STEPS = Array.from({ length: 10 }, (_, decade) => [1, 2, 5].map((m) => m * 10 ** decade)).flat();
/** Markers of a line series show when its points are at least this far apart on average (CSS px). */
const POINT_SPACING = 10;

/** What makes a chart's plot: its series and their colours (a new title alone does not). */
function seriesSignature(spec: ChartSpec): string {
  return spec.series.map((s) => `${s.key} ${s.color} ${s.points ? 'points' : 'line'}`).join('|');
}

/** A theme colour from VS Code's CSS variables, with a fallback for variables a theme lacks. */
function themeColor(variable: string, fallback: string): string {
  return getComputedStyle(document.body).getPropertyValue(variable).trim() || fallback;
}

/**
 * One chart of the metrics panel: a uPlot canvas over shared columns. The canvas is made once
 * and only its data changes (setData), so live updates never flicker; refresh() is called at
 * most once per animation frame by the panel. Colours come from VS Code's theme variables and
 * are re-read on retheme(). `data-points`, `data-update-ms` (setData) and `data-draw-ms`
 * (setData until drawn) say what was last drawn, `data-clipped` what a clipped axis left out,
 * `data-latest` the latest readings; tests and the benchmark read them. Axis ranges, ticks,
 * markers and the header's readings are chartMath.ts's pure functions.
 *
 * The header is the legend: the title on one line with the iteration its readings are from, then
 * one line per series (its colour, label and value), the latest iteration's or, under the
 * cursor, the hovered one's. A chart none of whose series has a value draws no axes (they would
 * show a scale as if there were data): it says it has no data instead.
 */
@customElement('empo2-metrics-chart')
export class MetricsChart extends LitElement {
  static override styles = metricsChartStyles;

  @property({ attribute: false }) spec!: ChartSpec;
  @property({ attribute: false }) columns!: MetricsColumns;
  /** The run trains: an empty chart has "no data yet", rather than none. */
  @property({ attribute: false }) live = false;
  /** What x is: "iteration", or "environment steps" (the header says "iteration 8"). */
  @property({ attribute: false }) xLabel = 'iteration';
  /** Reading lines the header keeps room for: the most series of a chart in the panel's row. */
  @property({ attribute: false }) readingLines = READING_LINES;

  private plot: uPlot | undefined;
  private resizeObserver: ResizeObserver | undefined;
  /** When the last setData/build was asked for: uPlot draws in a batch after it returns. */
  private drawRequested = 0;
  private latestText = '';
  /** What the header shows: the hovered iteration's readings, else the latest. */
  private shown: Readings | undefined;
  private hovered: number | undefined;
  private empty = true;
  private clipText = '';
  /** The clipped y range of a chart with clipOutliers, while some point lies beyond it. */
  private clip: Range | undefined;
  private readonly robustAxis = new RobustAxis();

  override render(): TemplateResult {
    const unit = this.spec.unit ? ` (${this.spec.unit})` : '';
    const format = this.spec.format ?? formatValue;
    const shown = this.empty ? undefined : this.shown;
    return html`<h3>
        <span class="title" title=${this.spec.title + unit}>${this.spec.title}${unit ? html`<span class="unit">${unit}</span>` : nothing}</span>
        <span class="iteration" data-testid="iteration">${shown ? `${this.xLabel} ${shown.iteration}` : ''}</span>
      </h3>
      <ul class="readings" data-testid="latest" title=${`Every series of this chart at one ${this.xLabel} (the latest, or the one under the cursor); – where a series has no value there`}>
        ${
          shown
            ? this.spec.series.map(
                (s, i) => html`<li class="reading" data-testid="reading">
                <span class="swatch ${s.points ? 'points' : ''}" data-color=${s.color}></span>
                <span class="label">${s.label}</span>
                <span class="value">${readingValue(shown.readings[i], format)}</span>
              </li>`,
              )
            : nothing
        }
      </ul>
      <div class="plot" ?hidden=${this.empty}></div>
      ${
        this.empty
          ? html`<div class="empty" data-testid="empty" role="status">
            <span class="headline">${this.live ? 'No data yet' : 'No data'}</span>
            <span>${this.live ? 'The chart fills as the run records it.' : this.columns.iterations.length ? `The run recorded none of it in ${this.columns.iterations.length} iterations.` : 'The run has no finished iteration.'}</span>
          </div>`
          : nothing
      }
      ${this.clipText ? html`<p class="clipped" data-testid="clipped">${this.clipText}</p>` : nothing}`;
  }

  override connectedCallback(): void {
    super.connectedCallback();
    this.resizeObserver = new ResizeObserver(() => this.resize());
    this.resizeObserver.observe(this);
  }

  override disconnectedCallback(): void {
    this.resizeObserver?.disconnect();
    this.resizeObserver = undefined;
    this.plot?.destroy();
    this.plot = undefined;
    super.disconnectedCallback();
  }

  protected override firstUpdated(): void {
    this.build();
  }

  protected override updated(changed: PropertyValues<this>): void {
    // Colours and the reserved lines through the CSSOM: the webview's CSP refuses style attributes.
    this.renderRoot.querySelector<HTMLElement>('.readings')?.style.setProperty('--lines', String(this.readingLines));
    for (const swatch of this.renderRoot.querySelectorAll<HTMLElement>('.swatch[data-color]')) {
      swatch.style.setProperty('--swatch', `var(${swatch.dataset.color})`);
    }
    // Other series (a run added to an overlay, another axis): a new plot. New columns (another
    // run, a reload, an overlay's next frame): draw them. Appends to the same columns come
    // through refresh(), once per frame.
    const before = changed.get('spec');
    if (
      (before !== undefined && seriesSignature(before) !== seriesSignature(this.spec)) ||
      (changed.has('xLabel') && changed.get('xLabel') !== undefined)
    ) {
      this.build();
    } else if (changed.has('columns') && changed.get('columns') !== undefined) {
      this.refresh();
    }
  }

  /** New points in the shared columns: redraw the data only. */
  refresh(): void {
    if (!this.plot) {
      return;
    }
    this.drawRequested = performance.now();
    this.plot.setData(this.data());
    this.noteDrawn(performance.now() - this.drawRequested);
  }

  /** The theme changed: rebuild with its colours (cheap; the data is shared). */
  retheme(): void {
    this.build();
  }

  private seriesValues(): (number | null)[][] {
    return this.spec.series.map((s) => this.columns.series[s.key] ?? []);
  }

  private data(): uPlot.AlignedData {
    this.clip = this.spec.clipOutliers
      ? this.robustAxis.update(this.columns, this.seriesValues(), this.columns.iterations.length)
      : undefined;
    return [this.columns.iterations, ...this.seriesValues()] as uPlot.AlignedData;
  }

  private build(): void {
    const container = this.renderRoot.querySelector<HTMLElement>('.plot');
    if (!container) {
      return;
    }
    this.plot?.destroy();
    const started = performance.now();
    this.drawRequested = started;
    const foreground = themeColor('--vscode-foreground', '#cccccc');
    const grid = themeColor('--vscode-editorWidget-border', 'rgba(128,128,128,0.25)');
    const font = `11px ${themeColor('--vscode-font-family', 'sans-serif')}`;
    const axis: uPlot.Axis = {
      stroke: foreground,
      grid: { stroke: grid, width: 1 },
      ticks: { stroke: grid, width: 1 },
      font,
    };
    const ticks = (_u: uPlot, splits: number[], _axis: number, _space: number, step: number) =>
      tickLabels(splits, step);
    const measure = document.createElement('canvas').getContext('2d');
    if (measure) {
      measure.font = font;
    }
    // As wide as its widest tick label, so none is cut ("…233e-4").
    const yAxisSize = (_u: uPlot, labels: string[] | null) =>
      axisWidth(labels ?? [], (label) => measure?.measureText(label).width ?? 7 * label.length);
    this.plot = new uPlot(
      {
        width: Math.max(200, container.clientWidth || this.clientWidth - 16),
        height: HEIGHT,
        pxAlign: 0,
        cursor: { drag: { x: true, y: false }, points: { size: 5 } },
        // The header is the legend (one line per series, the hovered iteration under the cursor).
        legend: { show: false },
        hooks: {
          setCursor: [(u) => this.hover(u.cursor.idx ?? undefined)],
          draw: [
            (u) => this.markClipped(u),
            // How long a redraw took, from setData to the canvas drawn (data-draw-ms).
            () => (this.dataset.drawMs = (performance.now() - this.drawRequested).toFixed(1)),
          ],
        },
        scales: {
          // One iteration sits mid-axis, rather than on an axis 0 wide that draws nothing.
          x: { time: false, range: (_u, min, max) => [...spanRange(min, max)] },
          // A flat series (every score 0 early on) gets a narrow band around it, not 0..100, and
          // one that differs by float noise reads flat in it; a chart with outliers is clipped at
          // its robust range.
          y: {
            range: (_u, min, max) => {
              const [low, high] = this.clip ?? valueRange(min, max);
              return uPlot.rangeNum(low, high, 0.1, true);
            },
          },
        },
        // Iterations are whole numbers: no tick at 1.25. No two tick labels read the same.
        axes: [
          { ...axis, incrs: WHOLE_STEPS, values: ticks },
          { ...axis, size: yAxisSize, values: ticks },
        ],
        series: [
          { label: this.xLabel, value: (_u, v) => (v === null || v === undefined ? '–' : String(v)) },
          ...this.spec.series.map((s, index) => this.seriesOptions(s, index, foreground)),
        ],
      },
      this.data(),
      container,
    );
    this.noteDrawn(performance.now() - started);
  }

  private seriesOptions(s: SeriesSpec, index: number, foreground: string): uPlot.Series {
    const color = themeColor(s.color, foreground);
    const format = this.spec.format ?? formatValue;
    const value = (_u: uPlot, v: number | null) => (v === null || v === undefined ? '–' : format(v));
    if (s.points) {
      // Points only (evaluations): a dot, then rings around it, so equal points never hide each other.
      const marker = markerOf(this.spec.series.slice(0, index).filter((other) => other.points).length);
      return {
        label: s.label,
        stroke: color,
        width: marker.width,
        value,
        paths: () => null,
        points: {
          show: true,
          size: marker.size,
          width: marker.width,
          stroke: color,
          fill: marker.filled ? color : 'transparent',
        },
      };
    }
    return {
      label: s.label,
      stroke: color,
      width: 1.5,
      // uPlot hands the dash to the canvas as it is: device pixels.
      ...(s.dash ? { dash: s.dash.map((v) => v * devicePixelRatio) } : {}),
      spanGaps: true,
      value,
      // A lone value draws no line: its marker is what shows it.
      points: {
        size: 5,
        fill: color,
        show: (u, si, from, to) => showPoints(u.data[si], from, to, u.bbox.width / devicePixelRatio, POINT_SPACING),
      },
    };
  }

  /** Triangles at the edge for the points a clipped axis leaves out, and a line saying so. */
  private markClipped(u: uPlot): void {
    const { min, max } = u.scales.y;
    const range: Range | undefined = this.clip && min !== undefined && max !== undefined ? [min, max] : undefined;
    const series = u.data.slice(1) as (number | null)[][];
    const beyond = range ? series.map((values) => beyondAxis(values, range)) : [];
    const note = range ? clipNote(series, beyond) : '';
    const ctx = u.ctx;
    const size = 5 * devicePixelRatio;
    beyond.forEach(({ above, below }, s) => {
      ctx.fillStyle = themeColor(this.spec.series[s].color, 'red');
      for (const [indices, edge, tip] of [
        [above, u.bbox.top, 1.6 * size],
        [below, u.bbox.top + u.bbox.height, -1.6 * size],
      ] as const) {
        for (const j of indices) {
          const x = u.valToPos(u.data[0][j], 'x', true);
          ctx.beginPath();
          ctx.moveTo(x, edge);
          ctx.lineTo(x - size, edge + tip);
          ctx.lineTo(x + size, edge + tip);
          ctx.fill();
        }
      }
    });
    if (note !== this.clipText) {
      this.clipText = note;
      this.dataset.clipped = note;
      this.requestUpdate();
    }
  }

  /** The cursor is over row `row` (undefined: it left): the header shows that iteration. */
  private hover(row: number | undefined): void {
    if (row === this.hovered) {
      return;
    }
    this.hovered = row;
    this.shown = row === undefined ? latestReadings(this.spec, this.columns) : readingsAt(this.spec, this.columns, row);
    this.requestUpdate();
  }

  private resize(): void {
    const container = this.renderRoot.querySelector<HTMLElement>('.plot');
    if (this.plot && container && container.clientWidth > 0 && Math.abs(this.plot.width - container.clientWidth) > 2) {
      this.plot.setSize({ width: container.clientWidth, height: HEIGHT });
    }
  }

  private noteDrawn(ms: number): void {
    const points = this.columns.iterations.length;
    this.dataset.points = String(points);
    this.dataset.updateMs = ms.toFixed(1);
    const empty = !hasData(this.spec, this.columns);
    const latest = latestReadings(this.spec, this.columns);
    const text = readingsText(latest, this.spec.format, this.xLabel);
    if (this.hovered === undefined) {
      this.shown = latest;
    }
    if (text !== this.latestText || empty !== this.empty) {
      const appeared = this.empty && !empty;
      this.latestText = text;
      this.dataset.latest = text;
      this.empty = empty;
      this.requestUpdate();
      if (appeared) {
        // The plot was hidden: size it to its container once it shows.
        void this.updateComplete.then(() => this.resize());
      }
    }
  }
}

declare global {
  interface HTMLElementTagNameMap {
    'empo2-metrics-chart': MetricsChart;
  }
}
