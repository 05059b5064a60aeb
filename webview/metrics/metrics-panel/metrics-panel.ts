import '@vscode-elements/elements/dist/vscode-button/index.js';
import '@vscode-elements/elements/dist/vscode-option/index.js';
import '@vscode-elements/elements/dist/vscode-single-select/index.js';
import type { VscodeSingleSelect } from '@vscode-elements/elements/dist/vscode-single-select/vscode-single-select.js';
import { LitElement, html, nothing, type PropertyValues, type TemplateResult } from 'lit';
import { customElement, property, state } from 'lit/decorators.js';
import { repeat } from 'lit/directives/repeat.js';
import { appendColumns, type MetricsColumns } from '../../../src/runs/metricsCharts';
import { sourceKey, type MetricsSource, type ShownRun } from '../../../src/runs/metricsMessages';
import {
  chartData,
  RUN_COLORS,
  runLabels,
  X_AXES,
  type ChartData,
  type XAxisId,
} from '../../../src/runs/metricsOverlay';
import '../metrics-chart';
import type { MetricsChart } from '../metrics-chart/metrics-chart';
import { metricsPanelStyles } from './metrics-panel.styles';

/** "Add run…" was pressed: the extension asks which runs. */
export type AddRunsEvent = CustomEvent<Record<string, never>>;
/** A run's remove button was pressed (sourceKey of the run). */
export type RemoveRunEvent = CustomEvent<{ readonly key: string }>;

/**
 * The live metrics of one run, or of several overlaid: a grid of charts over columns that new
 * iterations are appended to. The charts redraw once per animation frame, however many messages
 * arrived; the theme is followed by watching the body's class (VS Code switches `vscode-light` /
 * `vscode-dark` / `vscode-high-contrast` there). What is drawn on which x-axis is
 * metricsOverlay.ts's chartData; the header is the runs' legend. Fires `empo2-add-runs` and
 * `empo2-remove-run`.
 */
@customElement('empo2-metrics-panel')
export class MetricsPanel extends LitElement {
  static override styles = metricsPanelStyles;

  /** The shown runs' sources (embedded in the HTML; the columns follow in `reset`). */
  @property({ attribute: false }) sources: readonly MetricsSource[] = [];
  /** "reconnecting…", "connection lost", "host stopped": the numbers are not live now. */
  @property({ attribute: false }) connection: string | undefined;
  @state() private axis: XAxisId = 'iteration';
  @state() private data: ChartData | undefined;
  @state() private points: readonly number[] = [];
  private columns: MetricsColumns[] = [];
  private frame: number | undefined;
  private themeObserver: MutationObserver | undefined;

  /** The first shown run (the only one, outside a comparison). */
  get source(): MetricsSource | undefined {
    return this.sources[0];
  }

  /** Replaces every run and point (other runs, or a reload). */
  reset(runs: readonly ShownRun[]): void {
    this.sources = runs.map((run) => run.source);
    this.columns = runs.map((run) => run.columns);
    this.redraw();
  }

  /**
   * Appends new iterations (columns with the same keys) to the shown host run `runId` (default:
   * the first shown run); drawn on the next frame.
   */
  appendColumns(columns: MetricsColumns, runId = this.source?.runId): void {
    const index = this.sources.findIndex(
      (source) => source.runId === runId && (source.origin === 'host' || this.sources.length === 1),
    );
    if (index >= 0) {
      appendColumns(this.columns[index], columns);
      this.scheduleRefresh();
    }
  }

  /** A shown host run started or stopped training. */
  setLive(runId: string, live: boolean, runState: string): void {
    this.sources = this.sources.map((source) =>
      source.origin === 'host' && source.runId === runId ? { ...source, live, state: runState } : source,
    );
  }

  override connectedCallback(): void {
    super.connectedCallback();
    this.themeObserver = new MutationObserver(() => this.charts().forEach((chart) => chart.retheme()));
    this.themeObserver.observe(document.body, { attributes: true, attributeFilter: ['class'] });
  }

  override disconnectedCallback(): void {
    this.themeObserver?.disconnect();
    this.themeObserver = undefined;
    if (this.frame !== undefined) {
      cancelAnimationFrame(this.frame);
      this.frame = undefined;
    }
    super.disconnectedCallback();
  }

  protected override willUpdate(changed: PropertyValues): void {
    if (changed.has('axis') && changed.get('axis') !== undefined) {
      this.data = this.compute();
    }
  }

  override render(): TemplateResult {
    if (this.sources.length === 0) {
      return html`<p class="empty">No run to show. Start a training run or open a run folder, then run "EMPO²: Show Metrics".</p>`;
    }
    const data = this.data;
    const live = this.sources.some((source) => source.live);
    const xLabel = X_AXES[this.axis].label;
    const lines = Math.max(1, ...(data?.charts ?? []).map((chart) => chart.series.length));
    return html`
      <header>
        ${this.sources.length === 1 ? this.renderSingle(this.sources[0]) : this.renderOverlay()}
        <span class="controls">
          <vscode-single-select
            aria-label="x-axis"
            title="The x-axis: iterations, or the environment steps each run had taken (compare methods at equal steps)"
            data-testid="axis"
            .value=${this.axis}
            @change=${(event: Event) => (this.axis = (event.target as VscodeSingleSelect).value as XAxisId)}
          >
            ${Object.values(X_AXES).map((axis) => html`<vscode-option value=${axis.id}>x: ${axis.label}</vscode-option>`)}
          </vscode-single-select>
          <vscode-button secondary data-testid="add-runs" title="Overlay more runs on these charts, each in its own colour" @click=${() => this.fire('empo2-add-runs', {})}>Add run…</vscode-button>
        </span>
      </header>
      ${
        data?.missingAxis.length
          ? html`<p class="notice" data-testid="missing-axis">${data.missingAxis.join(', ')}: no environment-step counts in its metrics, so not drawn on this axis.</p>`
          : nothing
      }
      ${this.points.every((n) => n === 0) ? html`<p class="empty">No iteration has finished yet; the charts fill as the run trains.</p>` : nothing}
      <div class="grid">
        ${repeat(
          data?.charts ?? [],
          (spec) => spec.id,
          (spec) =>
            html`<empo2-metrics-chart data-chart=${spec.id} .spec=${spec} .columns=${data!.columns} .live=${live} .xLabel=${xLabel} .readingLines=${lines}></empo2-metrics-chart>`,
        )}
      </div>
    `;
  }

  private renderSingle(source: MetricsSource): TemplateResult {
    const points = this.points[0] ?? 0;
    return html`
      <h2>${source.runId}</h2>
      <span class="status" data-testid="points">${points} iteration${points === 1 ? '' : 's'}</span>
      ${this.renderState(source)}
    `;
  }

  /** The runs' legend: each run's colour, name, iterations and state, and a button to remove it. */
  private renderOverlay(): TemplateResult {
    const labels = runLabels(this.sources);
    return html`
      <h2>${this.sources.length} runs</h2>
      <ul class="runs" data-testid="runs">
        ${this.sources.map(
          (source, i) => html`<li class="run" data-testid="run" data-run-id=${source.runId}>
            <span class="swatch" data-color=${RUN_COLORS[i % RUN_COLORS.length]}></span>
            <span class="name">${labels[i]}</span>
            <span class="status">${this.points[i] ?? 0} it.</span>
            ${this.renderState(source)}
            <button class="remove" title=${`Remove ${labels[i]} from the charts`} aria-label=${`Remove ${labels[i]}`} @click=${() => this.fire('empo2-remove-run', { key: sourceKey(source) })}>×</button>
          </li>`,
        )}
      </ul>
    `;
  }

  private renderState(source: MetricsSource): TemplateResult {
    if (source.live && source.origin === 'host' && this.connection) {
      return html`<span class="offline" data-testid="connection">${this.connection}</span>`;
    }
    if (source.live) {
      return html`<span class="live">● live</span>`;
    }
    return html`<span class="status">${source.origin === 'folder' ? 'read from its folder (no host)' : (source.state ?? 'not training')}</span>`;
  }

  protected override updated(): void {
    // Run colours through the CSSOM: the webview's CSP refuses style attributes.
    for (const swatch of this.renderRoot.querySelectorAll<HTMLElement>('.swatch[data-color]')) {
      swatch.style.setProperty('--swatch', `var(${swatch.dataset.color})`);
    }
  }

  private fire<K extends 'empo2-add-runs' | 'empo2-remove-run'>(
    type: K,
    detail: K extends 'empo2-remove-run' ? RemoveRunEvent['detail'] : AddRunsEvent['detail'],
  ): void {
    this.dispatchEvent(new CustomEvent(type, { detail, bubbles: true, composed: true }));
  }

  private compute(): ChartData {
    const labels = runLabels(this.sources);
    return chartData(
      this.columns.map((columns, i) => ({ label: labels[i], columns, ...this.branchOf(this.sources[i]) })),
      X_AXES[this.axis],
    );
  }

  /** A shown branch whose parent (of the same host) is shown too: its line starts from the parent's. */
  private branchOf(source: MetricsSource): { branchOf?: { run: number; checkpoint: number } } {
    const parent = source.parent;
    const run =
      parent && source.origin === 'host'
        ? this.sources.findIndex((other) => other.origin === 'host' && other.runId === parent.runId)
        : -1;
    return parent && run >= 0 ? { branchOf: { run, checkpoint: parent.checkpoint } } : {};
  }

  private redraw(): void {
    this.data = this.compute();
    this.points = this.columns.map((columns) => columns.iterations.length);
  }

  private scheduleRefresh(): void {
    if (this.frame !== undefined) {
      return;
    }
    this.frame = requestAnimationFrame(() => {
      this.frame = undefined;
      this.points = this.columns.map((columns) => columns.iterations.length);
      const data = this.compute();
      if (data.columns === this.data?.columns) {
        // One run on iterations: its own columns grew in place; only the plots' data changes.
        this.charts().forEach((chart) => chart.refresh());
      } else {
        // Realigned columns (several runs, or environment steps): the charts redraw on render.
        this.data = data;
      }
    });
  }

  private charts(): MetricsChart[] {
    return [...this.renderRoot.querySelectorAll<MetricsChart>('empo2-metrics-chart')];
  }
}

declare global {
  interface HTMLElementTagNameMap {
    'empo2-metrics-panel': MetricsPanel;
  }
  interface HTMLElementEventMap {
    'empo2-add-runs': AddRunsEvent;
    'empo2-remove-run': RemoveRunEvent;
  }
}
