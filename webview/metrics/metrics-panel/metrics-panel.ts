import { LitElement, html, nothing, type TemplateResult } from 'lit';
import { customElement, property, state } from 'lit/decorators.js';
import { CHARTS, emptyColumns, type MetricsColumns } from '../../../src/runs/metricsCharts';
import type { MetricsSource } from '../../../src/runs/metricsMessages';
import '../metrics-chart';
import type { MetricsChart } from '../metrics-chart/metrics-chart';
import { metricsPanelStyles } from './metrics-panel.styles';

/**
 * The live metrics of one run: a grid of charts over one set of shared columns. New iterations
 * are appended to the columns and the charts redraw once per animation frame, however many
 * messages arrived; the theme is followed by watching the body's class (VS Code switches
 * `vscode-light` / `vscode-dark` / `vscode-high-contrast` there).
 */
@customElement('empo2-metrics-panel')
export class MetricsPanel extends LitElement {
  static override styles = metricsPanelStyles;

  @property({ attribute: false }) source: MetricsSource | undefined;
  /** "reconnecting…", "connection lost", "host stopped": the numbers are not live now. */
  @property({ attribute: false }) connection: string | undefined;
  @state() private columns: MetricsColumns = emptyColumns();
  @state() private points = 0;
  private frame: number | undefined;
  private themeObserver: MutationObserver | undefined;

  /** Replaces every point (another run, or a reload). */
  reset(source: MetricsSource | undefined, columns: MetricsColumns): void {
    this.source = source;
    this.columns = columns;
    this.points = columns.iterations.length;
  }

  /** Appends new iterations (columns with the same keys); drawn on the next frame. */
  appendColumns(columns: MetricsColumns): void {
    const into = this.columns;
    const x = columns.iterations;
    for (let i = 0; i < x.length; i++) {
      // A re-sent iteration (a resumed run rolled back) replaces the rows from it on.
      let end = into.iterations.length;
      while (end > 0 && into.iterations[end - 1] >= x[i]) {
        end--;
      }
      if (end !== into.iterations.length) {
        into.iterations.length = end;
        for (const key of Object.keys(into.series)) {
          into.series[key].length = end;
        }
      }
      into.iterations.push(x[i]);
      for (const key of Object.keys(into.series)) {
        into.series[key].push(columns.series[key]?.[i] ?? null);
      }
    }
    this.scheduleRefresh();
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

  override render(): TemplateResult {
    if (!this.source) {
      return html`<p class="empty">No run to show. Start a training run or open a run folder, then run "EMPO²: Show Metrics".</p>`;
    }
    return html`
      <header>
        <h2>${this.source.runId}</h2>
        <span class="status" data-testid="points">${this.points} iteration${this.points === 1 ? '' : 's'}</span>
        ${this.source.live && this.source.origin === 'host' && this.connection
          ? html`<span class="offline" data-testid="connection">${this.connection}</span>`
          : this.source.live
          ? html`<span class="live">● live</span>`
          : html`<span class="status">${this.source.origin === 'folder' ? 'read from its folder (no host)' : (this.source.state ?? 'not training')}</span>`}
      </header>
      ${this.points === 0 ? html`<p class="empty">No iteration has finished yet; the charts fill as the run trains.</p>` : nothing}
      <div class="grid">
        ${CHARTS.map((spec) => html`<empo2-metrics-chart data-chart=${spec.id} .spec=${spec} .columns=${this.columns} .live=${this.source!.live}></empo2-metrics-chart>`)}
      </div>
    `;
  }

  private scheduleRefresh(): void {
    if (this.frame !== undefined) {
      return;
    }
    this.frame = requestAnimationFrame(() => {
      this.frame = undefined;
      this.points = this.columns.iterations.length;
      this.charts().forEach((chart) => chart.refresh());
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
}
