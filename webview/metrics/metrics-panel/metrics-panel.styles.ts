import { css } from 'lit';
import { panelHostStyles } from '../../common/panelStyles';

export const metricsPanelStyles = [
  panelHostStyles,
  css`
    :host {
      padding: 10px 14px 24px;
    }

    header {
      display: flex;
      flex-wrap: wrap;
      align-items: baseline;
      gap: 10px;
      margin-bottom: 10px;
    }

    .controls {
      display: flex;
      align-items: center;
      gap: 8px;
      margin-left: auto;
    }

    .controls vscode-single-select {
      width: 190px;
    }

    .runs {
      display: flex;
      flex-wrap: wrap;
      gap: 4px 14px;
      margin: 0;
      padding: 0;
      list-style: none;
    }

    .run {
      display: flex;
      align-items: center;
      gap: 6px;
    }

    .swatch {
      flex-shrink: 0;
      width: 12px;
      height: 12px;
      border-radius: 2px;
      background: var(--swatch, var(--vscode-foreground));
    }

    .remove {
      border: none;
      background: none;
      color: var(--vscode-descriptionForeground);
      cursor: pointer;
      font-size: 1.1em;
      padding: 0 2px;
    }

    .remove:hover,
    .remove:focus-visible {
      color: var(--vscode-foreground);
    }

    .notice {
      color: var(--vscode-editorWarning-foreground);
    }

    h2 {
      margin: 0;
      font-size: 1.2em;
    }

    .status {
      color: var(--vscode-descriptionForeground);
    }

    .live {
      color: var(--vscode-charts-green);
      font-weight: 600;
    }

    .offline {
      color: var(--vscode-editorWarning-foreground);
      font-weight: 600;
    }

    .grid {
      display: grid;
      grid-template-columns: repeat(auto-fill, minmax(380px, 1fr));
      gap: 10px;
    }

    .empty {
      color: var(--vscode-descriptionForeground);
    }
  `,
];
