import { LitElement, html, nothing, type PropertyValues, type TemplateResult } from 'lit';
import { customElement, property } from 'lit/decorators.js';
import uPlot from 'uplot';
import '@vscode-elements/elements/dist/vscode-badge/index.js';
import { changeWithInterval, chartData, percent, type ComparisonView } from '../../../src/rerun/comparison';
import { compareViewStyles } from './compare-view.styles';

const HEIGHT = 200;

function themeColor(variable: string, fallback: string): string {
  return getComputedStyle(document.body).getPropertyValue(variable).trim() || fallback;
}

/**
 * Before and after a rerun: memory-free success per variation (a table and a uPlot bar chart),
 * the no-tip log-probability of each tip-guided episode's actions, the tip texts before and
 * after the edit, and the update's numbers. A dry run shows the "before" side and its loss.
 */
@customElement('empo2-compare-view')
export class CompareView extends LitElement {
  static override styles = compareViewStyles;

  @property({ attribute: false }) view: ComparisonView | undefined;
  private plot: uPlot | undefined;
  private themeObserver: MutationObserver | undefined;

  override connectedCallback(): void {
    super.connectedCallback();
    this.themeObserver = new MutationObserver(() => this.drawChart());
    this.themeObserver.observe(document.body, { attributes: true, attributeFilter: ['class'] });
  }

  override disconnectedCallback(): void {
    this.themeObserver?.disconnect();
    this.themeObserver = undefined;
    this.plot?.destroy();
    this.plot = undefined;
    super.disconnectedCallback();
  }

  protected override updated(changed: PropertyValues<this>): void {
    if (changed.has('view')) {
      this.drawChart();
    }
  }

  override render(): TemplateResult {
    const view = this.view;
    if (!view) {
      return html`<p>No rerun to show.</p>`;
    }
    return html`
      <h2>${view.title}</h2>
      <p class="status">
        <vscode-badge>${view.dryRun ? 'dry run: weights unchanged' : view.status}</vscode-badge>
        Memory-free success of each variation, the same seeds before and after; a change is green or red only when its 95% interval excludes zero.
      </p>
      <table aria-label="memory-free success before and after">
        <thead><tr><th>variation</th><th class="number">before</th><th class="number">after</th><th class="number">change</th></tr></thead>
        <tbody>
          ${view.rows.map(
            (r) => html`<tr data-variation=${r.variation}>
              <td>${r.variation}${r.chosen ? '' : ' (held out)'}</td>
              <td class="number before-value">${percent(r.before)}</td>
              <td class="number after-value">${percent(r.after)}</td>
              <td class="number change ${r.direction === 'unclear' ? '' : r.direction}" title="Change in points with its 95% interval (Newcombe), and the episodes played before and after; green or red only when the interval excludes zero">${changeWithInterval(r)}</td>
            </tr>`,
          )}
        </tbody>
      </table>
      <h3>Success before and after (%)</h3>
      <div class="chart" role="img" aria-label="bar chart of success before and after per variation"></div>
      ${view.tips.length ? this.renderTips(view) : nothing}
      ${view.episodes.length ? this.renderEpisodes(view) : nothing}
      ${view.facts.length ? html`<h3>Update</h3><dl>${view.facts.map(([k, v]) => html`<dt>${k}</dt><dd>${v}</dd>`)}</dl>` : nothing}
    `;
  }

  private renderTips(view: ComparisonView): TemplateResult {
    const how = { add: 'added', update: 'edited', delete: 'deleted' } as const;
    return html`<h3>Tips people edited, in the memory the rerun used</h3>
      <table aria-label="tip texts before and after the edit">
        <thead><tr><th>variation</th><th>tip</th><th>before</th><th>after</th></tr></thead>
        <tbody>
          ${view.tips.map(
            (t) => html`<tr data-tip-id=${t.tip_id}>
              <td>${t.variation_key ?? ''}</td><td>${t.tip_id}, ${how[t.kind]} by ${t.author}</td>
              <td class="tip before">${t.before ?? ''}</td><td class="tip">${t.after ?? '(deleted)'}</td>
            </tr>`,
          )}
        </tbody>
      </table>`;
  }

  private renderEpisodes(view: ComparisonView): TemplateResult {
    const fmt = (v: number | null) => (v === null ? '—' : v.toFixed(2));
    return html`<h3>Tip-guided actions, log-probability without the tips</h3>
      <table aria-label="per-episode log-probability before and after">
        <thead><tr><th>episode</th><th>variation</th><th>success</th><th class="number">steps with tips</th><th class="number">before</th><th class="number">after</th></tr></thead>
        <tbody>
          ${view.episodes.map(
            (e) => html`<tr>
              <td>${e.id}</td><td>${e.variation}</td><td>${e.success ? 'yes' : 'no'}</td><td class="number">${e.steps}</td>
              <td class="number">${fmt(e.before)}</td><td class="number">${view.dryRun ? '—' : fmt(e.after)}</td>
            </tr>`,
          )}
        </tbody>
      </table>`;
  }

  private drawChart(): void {
    const container = this.renderRoot.querySelector<HTMLElement>('.chart');
    if (!container || !this.view) {
      return;
    }
    this.plot?.destroy();
    const rows = this.view.rows;
    const foreground = themeColor('--vscode-foreground', '#cccccc');
    const grid = themeColor('--vscode-editorWidget-border', 'rgba(128,128,128,0.25)');
    const axis: uPlot.Axis = {
      stroke: foreground,
      grid: { stroke: grid, width: 1 },
      ticks: { stroke: grid, width: 1 },
    };
    // Two bars per variation, side by side: "before" left of the tick, "after" right of it.
    this.plot = new uPlot(
      {
        width: Math.max(240, container.clientWidth - 16),
        height: HEIGHT,
        legend: { live: false },
        cursor: { show: false },
        scales: { x: { time: false, range: [-0.5, rows.length - 0.5] }, y: { range: [0, 100] } },
        axes: [
          { ...axis, values: (_u, ticks) => ticks.map((t) => rows[Math.round(t)]?.variation ?? ''), incrs: [1] },
          { ...axis, size: 40 },
        ],
        series: [
          {},
          {
            label: 'before',
            fill: themeColor('--vscode-charts-blue', '#3794ff'),
            stroke: themeColor('--vscode-charts-blue', '#3794ff'),
            paths: uPlot.paths.bars!({ size: [0.35, 60], align: -1 }),
            points: { show: false },
          },
          {
            label: 'after',
            fill: themeColor('--vscode-charts-green', '#89d185'),
            stroke: themeColor('--vscode-charts-green', '#89d185'),
            paths: uPlot.paths.bars!({ size: [0.35, 60], align: 1 }),
            points: { show: false },
          },
        ],
      },
      chartData(this.view) as uPlot.AlignedData,
      container,
    );
    this.dataset.bars = String(rows.length);
  }
}

declare global {
  interface HTMLElementTagNameMap {
    'empo2-compare-view': CompareView;
  }
}
