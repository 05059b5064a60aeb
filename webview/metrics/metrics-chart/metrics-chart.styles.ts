import { css, unsafeCSS } from 'lit';
import uplotCss from 'uplot/dist/uPlot.min.css';

export const metricsChartStyles = [
  unsafeCSS(uplotCss),
  css`
    :host {
      display: block;
      min-width: 0;
      padding: 6px 8px 4px;
      border: 1px solid var(--vscode-widget-border, var(--vscode-panel-border));
      border-radius: 4px;
      background: var(--vscode-editor-background);
    }

    h3 {
      margin: 0 0 4px;
      font-size: 0.95em;
      font-weight: 600;
      display: flex;
      flex-wrap: wrap;
      justify-content: space-between;
      gap: 2px 6px;
    }

    .unit {
      font-weight: normal;
      color: var(--vscode-descriptionForeground);
    }

    .clipped {
      margin: 0 0 2px;
      font-size: 0.85em;
      color: var(--vscode-editorWarning-foreground, var(--vscode-descriptionForeground));
    }

    .latest {
      font-weight: normal;
      color: var(--vscode-descriptionForeground);
      font-variant-numeric: tabular-nums;
    }

    .plot {
      width: 100%;
      min-height: 180px;
    }

    .empty {
      color: var(--vscode-descriptionForeground);
      font-size: 0.9em;
      padding: 8px 0;
    }

    .u-legend {
      font-size: 0.85em;
      color: var(--vscode-foreground);
    }

    .u-legend .u-marker {
      width: 10px;
      height: 10px;
    }

    .u-select {
      background: var(--vscode-editor-selectionBackground);
      opacity: 0.4;
    }
  `,
];
