import { css } from 'lit';
import { panelHostStyles } from '../../common/panelStyles';

export const tipsPanelStyles = [
  panelHostStyles,
  css`
    :host {
      padding: 6px 8px 12px;
    }

    .connection {
      margin: 0 0 6px;
      padding: 4px 8px;
      border-radius: 3px;
      border-left: 3px solid var(--vscode-editorWarning-foreground);
      background: var(--vscode-inputValidation-warningBackground);
      color: var(--vscode-foreground);
    }

    header.offline {
      opacity: 0.6;
    }

    .empty {
      display: flex;
      flex-direction: column;
      gap: 10px;
      max-width: 420px;
      padding: 4px;
    }

    p {
      margin: 0;
      line-height: 1.4;
    }

    .muted {
      color: var(--vscode-descriptionForeground);
    }

    .error {
      color: var(--vscode-errorForeground);
      margin: 6px 0;
    }

    .empty .actions {
      display: flex;
      flex-direction: column;
      gap: 6px;
    }

    .empty vscode-button {
      width: 100%;
    }

    header {
      position: sticky;
      top: 0;
      z-index: 1;
      padding-bottom: 6px;
      background: var(--vscode-sideBar-background);
    }

    .run {
      font-weight: 600;
      margin-bottom: 4px;
      overflow: hidden;
      text-overflow: ellipsis;
      white-space: nowrap;
    }

    .filters {
      display: flex;
      flex-wrap: wrap;
      gap: 4px;
    }

    .filters .search {
      flex: 1 1 100%;
    }

    .filters vscode-single-select {
      flex: 1 1 120px;
      min-width: 0;
    }

    form.add {
      display: flex;
      flex-direction: column;
      gap: 4px;
      margin: 6px 0 10px;
      padding: 6px;
      border: 1px solid var(--vscode-widget-border, var(--vscode-panel-border));
    }

    form.add vscode-textarea,
    form.add vscode-single-select {
      width: 100%;
    }

    .cards {
      display: flex;
      flex-direction: column;
      gap: 2px;
    }

    vscode-collapsible {
      margin-top: 6px;
    }

    .more {
      margin-top: 8px;
      width: 100%;
    }
  `,
];
