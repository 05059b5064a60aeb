import type * as vscode from 'vscode';
import { randomBytes } from 'node:crypto';
import * as path from 'node:path';
import { INITIAL_STATE_ELEMENT_ID } from './webviewConstants';

// The one HTML shell every EMPO² webview uses (STYLE.md rule 5):
// - CSP default-src 'none'; scripts only with this page's nonce; styles, fonts and images only
//   from the webview's own resource origin;
// - the webview may load files from out/webview (the bundles) and media/ and nothing else;
// - every URL goes through asWebviewUri;
// - the initial state is embedded as JSON, so first paint never races a message.
// Only types come from vscode, so unit tests can render a shell in plain Node.

/** The parts of vscode.Webview the shell needs. */
export type WebviewLike = Pick<vscode.Webview, 'asWebviewUri' | 'cspSource'>;

export interface WebviewShell {
  /** Name of the bundle: webview/<entry>/index.ts, built to out/webview/<entry>.js. */
  readonly entry: string;
  readonly title: string;
  /** JSON-serialisable state the page reads before it first renders. */
  readonly initialState: unknown;
}

function joinPath(base: vscode.Uri, ...segments: string[]): vscode.Uri {
  return base.with({ path: path.posix.join(base.path, ...segments) });
}

export function webviewResourceRoots(extensionUri: vscode.Uri): vscode.Uri[] {
  return [joinPath(extensionUri, 'out', 'webview'), joinPath(extensionUri, 'media')];
}

export function webviewOptions(extensionUri: vscode.Uri): vscode.WebviewOptions {
  return { enableScripts: true, localResourceRoots: webviewResourceRoots(extensionUri) };
}

/** 128 random bits, base64: a fresh nonce for each HTML document. */
export function createNonce(): string {
  return randomBytes(16).toString('base64');
}

export function contentSecurityPolicy(cspSource: string, nonce: string): string {
  return [
    "default-src 'none'",
    `img-src ${cspSource} data:`,
    `font-src ${cspSource}`,
    `style-src ${cspSource}`,
    `script-src 'nonce-${nonce}'`,
  ].join('; ');
}

export function renderWebviewHtml(
  webview: WebviewLike,
  extensionUri: vscode.Uri,
  shell: WebviewShell,
  nonce: string = createNonce(),
): string {
  const scriptUri = webview.asWebviewUri(joinPath(extensionUri, 'out', 'webview', `${shell.entry}.js`));
  const styleUri = webview.asWebviewUri(joinPath(extensionUri, 'media', 'webview.css'));
  const csp = contentSecurityPolicy(webview.cspSource, nonce);
  return `<!DOCTYPE html>
<html lang="en">
<head>
  <meta charset="UTF-8">
  <meta http-equiv="Content-Security-Policy" content="${escapeAttribute(csp)}">
  <meta name="viewport" content="width=device-width, initial-scale=1.0">
  <link rel="stylesheet" href="${escapeAttribute(styleUri.toString())}">
  <title>${escapeText(shell.title)}</title>
</head>
<body>
  <script type="application/json" id="${INITIAL_STATE_ELEMENT_ID}">${embedJson(shell.initialState)}</script>
  <script type="module" nonce="${nonce}" src="${escapeAttribute(scriptUri.toString())}"></script>
</body>
</html>`;
}

/** JSON inside <script>: `<` escaped so no value can close the element early. */
export function embedJson(value: unknown): string {
  return JSON.stringify(value ?? null).replace(/</g, '\\u003c');
}

function escapeText(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

function escapeAttribute(text: string): string {
  return escapeText(text).replace(/"/g, '&quot;');
}
