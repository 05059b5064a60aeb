import { css } from 'lit';

// Theme colours come from VS Code's CSS variables, so the panel follows light, dark and
// high-contrast themes without code.
export const tipsPanelStyles = css`
  :host {
    display: block;
    padding: 8px 12px;
    color: var(--vscode-foreground);
    font-family: var(--vscode-font-family);
    font-size: var(--vscode-font-size);
  }

  .empty {
    display: flex;
    flex-direction: column;
    gap: 10px;
    max-width: 420px;
  }

  p {
    margin: 0;
    line-height: 1.4;
  }

  .muted {
    color: var(--vscode-descriptionForeground);
  }

  .actions {
    display: flex;
    flex-direction: column;
    gap: 6px;
  }

  vscode-button {
    width: 100%;
  }
`;
