import { css } from 'lit';
import { panelHostStyles } from '../../common/panelStyles';

export const episodeViewStyles = [
  panelHostStyles,
  css`
    :host {
      max-width: 980px;
      padding: 12px 20px 40px;
      line-height: 1.45;
    }

    h1 {
      font-size: 1.4em;
      margin: 0 0 4px;
    }

    h2 {
      font-size: 1.1em;
      margin: 18px 0 6px;
    }

    .task {
      margin: 4px 0 10px;
      font-size: 1.05em;
    }

    .facts {
      display: flex;
      flex-wrap: wrap;
      gap: 6px;
      margin: 6px 0;
    }

    .fact {
      padding: 1px 8px;
      border-radius: 10px;
      background: var(--vscode-badge-background);
      color: var(--vscode-badge-foreground);
      font-size: 0.9em;
    }

    .fact.success {
      background: var(--vscode-testing-iconPassed);
      color: var(--vscode-editor-background);
    }

    .fact.failure {
      background: var(--vscode-testing-iconFailed);
      color: var(--vscode-editor-background);
    }

    .provisional {
      margin: 6px 0 10px;
      padding: 6px 10px;
      border-left: 3px solid var(--vscode-editorInfo-foreground);
      background: var(--vscode-textBlockQuote-background);
    }

    .written-tip {
      padding: 8px 10px;
      border-left: 3px solid var(--vscode-charts-yellow);
      background: var(--vscode-textBlockQuote-background);
    }

    a.tip-link {
      color: var(--vscode-textLink-foreground);
      cursor: pointer;
      text-decoration: none;
      font-family: var(--vscode-editor-font-family);
      font-size: 0.9em;
    }

    a.tip-link:hover {
      text-decoration: underline;
    }

    .step {
      margin: 10px 0;
      padding: 8px 10px;
      border: 1px solid var(--vscode-widget-border, var(--vscode-panel-border));
      border-radius: 4px;
    }

    .step.focused {
      border-color: var(--vscode-focusBorder);
      box-shadow: 0 0 0 1px var(--vscode-focusBorder);
    }

    .step h3 {
      margin: 0 0 6px;
      font-size: 1em;
      display: flex;
      justify-content: space-between;
      gap: 8px;
    }

    .reward {
      font-weight: normal;
      color: var(--vscode-descriptionForeground);
    }

    .reward.positive {
      color: var(--vscode-testing-iconPassed);
    }

    .label {
      color: var(--vscode-descriptionForeground);
      font-size: 0.9em;
      margin-top: 6px;
    }

    .observation {
      margin: 2px 0;
      white-space: pre-wrap;
    }

    code,
    pre {
      font-family: var(--vscode-editor-font-family);
      font-size: var(--vscode-editor-font-size);
    }

    code.action {
      padding: 1px 4px;
      background: var(--vscode-textCodeBlock-background);
      border-radius: 3px;
    }

    ul.tips {
      margin: 2px 0;
      padding-left: 18px;
    }

    details pre {
      white-space: pre-wrap;
      word-break: break-word;
      background: var(--vscode-textCodeBlock-background);
      padding: 6px;
      margin: 4px 0;
    }

    summary {
      cursor: pointer;
      color: var(--vscode-descriptionForeground);
      font-size: 0.9em;
      margin-top: 6px;
    }

    .tip-action {
      font-size: 0.9em;
      color: var(--vscode-descriptionForeground);
    }
  `,
];
