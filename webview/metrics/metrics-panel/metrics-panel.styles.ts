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
      align-items: baseline;
      gap: 10px;
      margin-bottom: 10px;
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
