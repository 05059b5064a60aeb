import { LitElement, html, type PropertyValues, type TemplateResult } from 'lit';
import { customElement, property } from 'lit/decorators.js';
import uPlot from 'uplot';
import type { ChartSpec, MetricsColumns } from '../../../src/runs/metricsCharts';
import { metricsChartStyles } from './metrics-chart.styles';

const HEIGHT = 180;
const ITERATION_STEPS = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1_000, 2_000, 5_000, 10_000, 20_000, 50_000, 100_000, 200_000, 500_000, 1_000_000];

/** A theme colour from VS Code's CSS variables, with a fallback for variables a theme lacks. */
function themeColor(variable: string, fallback: string): string {
  return getComputedStyle(document.body).getPropertyValue(variable).trim() || fallback;
}

/**
 * One chart of the metrics panel: a uPlot canvas over shared columns. The canvas is made once
 * and only its data changes (setData), so live updates never flicker; refresh() is called at
 * most once per animation frame by the panel. Colours come from VS Code's theme variables and
 * are re-read on retheme(). `data-points`, `data-update-ms` (setData) and `data-draw-ms`
 * (setData until drawn) say what was last drawn; tests and the benchmark read them.
 */
@customElement('empo2-metrics-chart')
export class MetricsChart extends LitElement {
  static override styles = metricsChartStyles;

  @property({ attribute: false }) spec!: ChartSpec;
  @property({ attribute: false }) columns!: MetricsColumns;

  private plot: uPlot | undefined;
  private resizeObserver: ResizeObserver | undefined;
  /** When the last setData/build was asked for: uPlot draws in a batch after it returns. */
  private drawRequested = 0;
  private latestText = '';

  override render(): TemplateResult {
    return html`<h3><span>${this.spec.title}</span><span class="latest">${this.latestText}</span></h3>
      <div class="plot"></div>`;
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
    // New columns (another run, a reload): draw them. Appends to the same columns come through
    // refresh(), once per frame.
    if (changed.has('columns') && changed.get('columns') !== undefined) {
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

  private data(): uPlot.AlignedData {
    return [this.columns.iterations, ...this.spec.series.map((s) => this.columns.series[s.key] ?? [])] as uPlot.AlignedData;
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
    const axis: uPlot.Axis = { stroke: foreground, grid: { stroke: grid, width: 1 }, ticks: { stroke: grid, width: 1 }, font };
    this.plot = new uPlot(
      {
        width: Math.max(200, container.clientWidth || this.clientWidth - 16),
        height: HEIGHT,
        pxAlign: 0,
        cursor: { drag: { x: true, y: false }, points: { size: 5 } },
        legend: { live: true },
        // How long a redraw took, from setData to the canvas drawn (data-draw-ms).
        hooks: { draw: [() => (this.dataset.drawMs = (performance.now() - this.drawRequested).toFixed(1))] },
        scales: {
          x: { time: false },
          // A flat series (every return 0 early on) gets a narrow band around it, not 0..100.
          y: { range: (_u, min, max) => (min === max ? [min - 1, max + 1] : uPlot.rangeNum(min, max, 0.1, true)) },
        },
        // Iterations are whole numbers: no tick at 1.25.
        axes: [{ ...axis, incrs: ITERATION_STEPS }, { ...axis, size: 50 }],
        series: [
          { label: 'iteration', value: (_u, v) => (v === null || v === undefined ? '–' : String(v)) },
          ...this.spec.series.map((s) => ({
            label: s.label,
            stroke: themeColor(s.color, foreground),
            width: 1.5,
            spanGaps: true,
            points: s.points ? { show: true, size: 5, fill: themeColor(s.color, foreground) } : { show: false },
            paths: s.points ? () => null : undefined,
            value: (_u: uPlot, v: number | null) => (v === null || v === undefined ? '–' : formatValue(v)),
          })),
        ],
      },
      this.data(),
      container,
    );
    this.noteDrawn(performance.now() - started);
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
    const latest = this.spec.series
      .map((s) => {
        const values = this.columns.series[s.key] ?? [];
        for (let i = values.length - 1; i >= 0; i--) {
          if (values[i] !== null) {
            return `${s.label} ${formatValue(values[i] as number)}`;
          }
        }
        return undefined;
      })
      .filter(Boolean)
      .slice(0, 2)
      .join(' · ') || (points > 0 ? 'not recorded in this run' : '');
    if (latest !== this.latestText) {
      this.latestText = latest;
      this.requestUpdate();
    }
  }
}

export function formatValue(value: number): string {
  const magnitude = Math.abs(value);
  if (magnitude !== 0 && (magnitude >= 1e5 || magnitude < 1e-3)) {
    return value.toExponential(2);
  }
  return magnitude >= 100 ? value.toFixed(0) : magnitude >= 1 ? value.toFixed(2) : value.toFixed(3);
}

declare global {
  interface HTMLElementTagNameMap {
    'empo2-metrics-chart': MetricsChart;
  }
}
