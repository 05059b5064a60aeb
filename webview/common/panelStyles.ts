import { css } from 'lit';

/**
 * The root element of every panel and view: a block in the editor's own font and colours. They
 * come from VS Code's theme variables, so light, dark and high-contrast themes need no code. Each
 * panel puts its own padding after it (`static styles = [panelHostStyles, css`:host { … }`]`).
 */
export const panelHostStyles = css`
  :host {
    display: block;
    color: var(--vscode-foreground);
    font-family: var(--vscode-font-family);
    font-size: var(--vscode-font-size);
  }
`;
