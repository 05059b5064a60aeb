import { css } from 'lit';

export const tipCardStyles = css`
  :host {
    display: block;
    padding: 6px 8px;
    border-radius: 3px;
    border: 1px solid transparent;
    color: var(--vscode-foreground);
  }

  :host([highlighted]) {
    border-color: var(--vscode-focusBorder);
    background: var(--vscode-list-inactiveSelectionBackground);
  }

  :host(:hover) {
    background: var(--vscode-list-hoverBackground);
  }

  /* The link to the host is down: what is shown may be stale; the editor stays usable. */
  :host([offline]) .text,
  :host([offline]) .meta {
    opacity: 0.55;
  }

  .saving {
    margin: 4px 0;
    color: var(--vscode-descriptionForeground);
    font-style: italic;
  }

  .text {
    margin: 0 0 4px;
    line-height: 1.4;
    white-space: pre-wrap;
    word-break: break-word;
  }

  /* A deleted tip, shown by "Show deleted": read-only, its history one click away. */
  .text.deleted {
    text-decoration: line-through;
    color: var(--vscode-descriptionForeground);
  }

  .deleted-note {
    margin: 0 0 2px;
    font-size: 0.9em;
    color: var(--vscode-editorWarning-foreground, var(--vscode-descriptionForeground));
  }

  .meta {
    display: flex;
    flex-wrap: wrap;
    gap: 4px 10px;
    font-size: 0.9em;
    color: var(--vscode-descriptionForeground);
  }

  .meta a {
    color: var(--vscode-textLink-foreground);
    cursor: pointer;
    text-decoration: none;
  }

  .meta a:hover {
    text-decoration: underline;
  }

  .actions {
    display: flex;
    gap: 6px;
    margin-top: 6px;
  }

  vscode-textarea {
    width: 100%;
  }

  .conflict {
    margin-top: 6px;
    padding: 6px;
    border-left: 3px solid var(--vscode-editorWarning-foreground);
    background: var(--vscode-inputValidation-warningBackground);
  }

  .conflict .texts {
    display: grid;
    grid-template-columns: 1fr 1fr;
    gap: 8px;
    margin: 6px 0;
  }

  .conflict h4 {
    margin: 0 0 2px;
    font-size: 0.9em;
    font-weight: 600;
  }

  .conflict pre {
    margin: 0;
    white-space: pre-wrap;
    word-break: break-word;
    font-family: var(--vscode-font-family);
  }

  .history {
    margin: 6px 0 0;
    padding-left: 0;
    list-style: none;
    font-size: 0.9em;
  }

  .history li {
    margin-bottom: 2px;
  }

  .error {
    color: var(--vscode-errorForeground);
    margin-top: 4px;
  }

  .author-person {
    color: var(--vscode-charts-purple);
  }
`;
