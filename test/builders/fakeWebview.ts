import type * as vscode from 'vscode';
import type { WebviewLike } from '../../src/common/html';
import { FakeUri } from './fakeUri';

export interface FakeWebviewFields {
  cspSource: string;
  /** Host part of the URLs asWebviewUri returns, as VS Code's own resource origin would be. */
  resourceAuthority: string;
}

/**
 * Builds a stand-in for vscode.Webview's URL and CSP parts. Every field has a default; a test
 * names only what it is about. (A real webview exists only inside VS Code; the integration and
 * end-to-end tiers cover the real one.)
 */
export function aWebview(fields: Partial<FakeWebviewFields> = {}): WebviewLike & { asWebviewUriCalls: string[] } {
  const { cspSource, resourceAuthority } = {
    cspSource: 'https://file+.vscode-resource.vscode-cdn.net',
    resourceAuthority: 'file+.vscode-resource.vscode-cdn.net',
    ...fields,
  };
  const asWebviewUriCalls: string[] = [];
  return {
    cspSource,
    asWebviewUriCalls,
    asWebviewUri(uri: vscode.Uri): vscode.Uri {
      asWebviewUriCalls.push(uri.path);
      return new FakeUri('https', resourceAuthority, uri.path) as unknown as vscode.Uri;
    },
  };
}

export function anExtensionUri(path = '/home/user/.vscode/extensions/empo2.empo2-studio-0.0.1'): vscode.Uri {
  return FakeUri.file(path);
}
