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
      margin: 0 0 2px;
      font-size: 0.95em;
      font-weight: 600;
      line-height: 18px;
      display: flex;
      justify-content: space-between;
      align-items: baseline;
      gap: 8px;
      white-space: nowrap;
    }

    /* One line, whatever the width: a title too long for a narrow panel ends in an ellipsis and
       is whole in its tooltip. */
    .title {
      min-width: 0;
      overflow: hidden;
      text-overflow: ellipsis;
    }

    .unit,
    .iteration {
      font-weight: normal;
      color: var(--vscode-descriptionForeground);
    }

    .iteration {
      flex-shrink: 0;
      font-size: 0.9em;
      font-variant-numeric: tabular-nums;
    }

    .readings {
      list-style: none;
      margin: 0 0 4px;
      padding: 0;
      min-height: calc(var(--lines, 3) * 16px);
      font-size: 0.85em;
      line-height: 16px;
    }

    .reading {
      display: flex;
      align-items: center;
      gap: 6px;
      white-space: nowrap;
      overflow: hidden;
    }

    .swatch {
      flex-shrink: 0;
      width: 10px;
      height: 10px;
      border-radius: 2px;
      background: var(--swatch, var(--vscode-foreground));
    }

    .swatch.points {
      border-radius: 50%;
    }

    .label {
      color: var(--vscode-descriptionForeground);
    }

    .value {
      color: var(--vscode-foreground);
      font-variant-numeric: tabular-nums;
    }

    .clipped {
      margin: 2px 0 0;
      font-size: 0.85em;
      color: var(--vscode-editorWarning-foreground, var(--vscode-descriptionForeground));
    }

    .plot {
      width: 100%;
      min-height: 180px;
    }

    .plot[hidden] {
      display: none;
    }

    /* As VS Code's own empty views: a line of muted text where the content would be, in the
       plot's place so the grid keeps its rows. */
    .empty {
      height: 180px;
      display: flex;
      flex-direction: column;
      align-items: center;
      justify-content: center;
      gap: 4px;
      text-align: center;
      color: var(--vscode-descriptionForeground);
      font-size: 0.9em;
      border: 1px dashed var(--vscode-widget-border, var(--vscode-panel-border, rgba(128, 128, 128, 0.35)));
      border-radius: 3px;
    }

    .empty .headline {
      color: var(--vscode-foreground);
      font-weight: 600;
    }

    .u-select {
      background: var(--vscode-editor-selectionBackground);
      opacity: 0.4;
    }
  `,
];
