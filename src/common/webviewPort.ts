import type * as vscode from 'vscode';
import type { MessagePort } from './messageEndpoint';

/** The extension's end of a webview's postMessage channel. */
export function webviewPort(webview: Pick<vscode.Webview, 'postMessage' | 'onDidReceiveMessage'>): MessagePort {
  return {
    // postMessage resolves false when the webview is gone; the request timeout covers that case.
    postMessage: (message) => void webview.postMessage(message),
    onMessage: (listener) => webview.onDidReceiveMessage(listener),
  };
}
