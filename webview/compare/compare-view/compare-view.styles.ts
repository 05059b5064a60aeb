import { css, unsafeCSS } from 'lit';
import uplotCss from 'uplot/dist/uPlot.min.css';
import { panelHostStyles } from '../../common/panelStyles';

export const compareViewStyles = [
  unsafeCSS(uplotCss),
  panelHostStyles,
  css`
    :host {
      padding: 8px 16px 24px;
    }
    h2 {
      font-size: 1.15em;
      margin: 8px 0 4px;
    }
    h3 {
      font-size: 1em;
      margin: 16px 0 6px;
    }
    .status {
      color: var(--vscode-descriptionForeground);
    }
    table {
      border-collapse: collapse;
      width: 100%;
      font-variant-numeric: tabular-nums;
    }
    th,
    td {
      text-align: left;
      padding: 3px 8px;
      border-bottom: 1px solid var(--vscode-widget-border, var(--vscode-panel-border));
    }
    td.number,
    th.number {
      text-align: right;
    }
    .up {
      color: var(--vscode-testing-iconPassed, var(--vscode-charts-green));
    }
    .down {
      color: var(--vscode-testing-iconFailed, var(--vscode-charts-red));
    }
    .tip {
      white-space: pre-wrap;
    }
    .before {
      color: var(--vscode-descriptionForeground);
      text-decoration: line-through;
    }
    .chart {
      max-width: 640px;
      padding: 6px 8px;
      border: 1px solid var(--vscode-widget-border, var(--vscode-panel-border));
      border-radius: 4px;
      background: var(--vscode-editor-background);
    }
    dl {
      display: grid;
      grid-template-columns: max-content 1fr;
      gap: 2px 12px;
    }
    dt {
      color: var(--vscode-descriptionForeground);
    }
    dd {
      margin: 0;
    }
  `,
];
