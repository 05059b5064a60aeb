import * as vscode from 'vscode';
import { renderWebviewHtml, webviewOptions } from '../common/html';
import { Disposable, disposeAll, type IDisposable } from '../common/lifecycle';
import { MessageEndpoint } from '../common/messageEndpoint';
import { webviewPort } from '../common/webviewPort';
import type { RerunResult } from '../rpc/protocol';
import { comparisonView, type ComparisonView } from './comparison';
import { CompareNotifications } from './compareMessages';

/**
 * The before/after comparison of a rerun (or the report of a dry run): one webview panel, reused.
 * The view is computed here (comparison.ts) and embedded in the HTML; the webview only draws it.
 */
export class ComparisonPanel extends Disposable {
  static readonly viewType = 'empo2.compare';
  private panel: vscode.WebviewPanel | undefined;
  private endpoint: MessageEndpoint | undefined;
  private panelDisposables: IDisposable[] = [];
  private view: ComparisonView | undefined;

  constructor(private readonly extensionUri: vscode.Uri) {
    super();
  }

  /** What the panel shows (tests read it). */
  get shown(): ComparisonView | undefined {
    return this.panel ? this.view : undefined;
  }

  show(record: RerunResult): ComparisonView {
    const view = comparisonView(record);
    this.view = view;
    if (this.panel) {
      this.panel.title = view.title;
      this.panel.reveal(undefined, true);
      this.endpoint!.sendNotification(CompareNotifications.show, { view });
      return view;
    }
    const panel = vscode.window.createWebviewPanel(
      ComparisonPanel.viewType,
      view.title,
      { viewColumn: vscode.ViewColumn.Active, preserveFocus: true },
      { ...webviewOptions(this.extensionUri), retainContextWhenHidden: true },
    );
    panel.iconPath = vscode.Uri.joinPath(this.extensionUri, 'media', 'empo2.png');
    this.panel = panel;
    this.endpoint = new MessageEndpoint(webviewPort(panel.webview), { awaitPeerReady: true });
    this.panelDisposables.push(
      this.endpoint,
      panel.onDidDispose(() => {
        disposeAll(this.panelDisposables);
        this.panel = undefined;
        this.endpoint = undefined;
      }),
    );
    panel.webview.html = renderWebviewHtml(panel.webview, this.extensionUri, {
      entry: 'compare',
      title: view.title,
      initialState: { view },
    });
    return view;
  }

  override dispose(): void {
    this.panel?.dispose();
    disposeAll(this.panelDisposables);
    super.dispose();
  }
}
