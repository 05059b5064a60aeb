import * as vscode from 'vscode';
import { renderWebviewHtml, webviewOptions } from './html';
import { Disposable, disposeAll, type IDisposable } from './lifecycle';
import { MessageEndpoint } from './messageEndpoint';
import { webviewPort } from './webviewPort';

/** What a webview panel is: its view type, its bundle (out/webview/<entry>.js), its options. */
export interface WebviewPanelKind {
  readonly viewType: string;
  readonly entry: string;
  readonly enableFindWidget?: boolean;
}

/**
 * One webview panel in the editor area, opened on demand and reused (the episode view, the
 * metrics panel): the locked-down HTML shell with the initial state embedded, a message endpoint
 * that waits for the page's `ready`, the handlers a subclass wires on each new page, and
 * everything let go when the person closes the panel. Kept alive while hidden
 * (retainContextWhenHidden), so scroll and zoom survive switching tabs.
 */
export abstract class SingleWebviewPanel extends Disposable {
  private panel: vscode.WebviewPanel | undefined;
  private panelEndpoint: MessageEndpoint | undefined;
  private panelDisposables: IDisposable[] = [];

  constructor(
    protected readonly extensionUri: vscode.Uri,
    private readonly kind: WebviewPanelKind,
  ) {
    super();
  }

  protected get isOpen(): boolean {
    return this.panel !== undefined;
  }

  /** The open page's endpoint (undefined while the panel is closed). */
  protected get endpoint(): MessageEndpoint | undefined {
    return this.panelEndpoint;
  }

  /**
   * Shows the panel titled `title`: when open, retitles it and (with `reveal`) brings it to the
   * front (false); else creates it with `initialState` embedded in its HTML (true). A refresh
   * the person did not ask for (a reconnect reloading the data) passes `reveal` false, so the
   * tab they are reading stays in front.
   */
  protected openPanel(title: string, initialState: unknown, preserveFocus = true, reveal = true): boolean {
    if (this.panel) {
      this.panel.title = title;
      if (reveal) {
        this.panel.reveal(undefined, preserveFocus);
      }
      return false;
    }
    const panel = vscode.window.createWebviewPanel(
      this.kind.viewType,
      title,
      { viewColumn: vscode.ViewColumn.Active, preserveFocus },
      {
        ...webviewOptions(this.extensionUri),
        retainContextWhenHidden: true,
        enableFindWidget: this.kind.enableFindWidget ?? false,
      },
    );
    panel.iconPath = vscode.Uri.joinPath(this.extensionUri, 'media', 'empo2.png');
    const endpoint = new MessageEndpoint(webviewPort(panel.webview), { awaitPeerReady: true });
    this.panel = panel;
    this.panelEndpoint = endpoint;
    this.panelDisposables.push(
      endpoint,
      ...this.wire(endpoint),
      panel.onDidDispose(() => {
        disposeAll(this.panelDisposables);
        this.panel = undefined;
        this.panelEndpoint = undefined;
        this.closed();
      }),
    );
    panel.webview.html = renderWebviewHtml(panel.webview, this.extensionUri, {
      entry: this.kind.entry,
      title,
      initialState,
    });
    return true;
  }

  /** The page's request handlers, registered on each new page; disposed when it closes. */
  protected abstract wire(endpoint: MessageEndpoint): IDisposable[];

  /** After the person closed the panel: forget what it showed. */
  protected closed(): void {}

  override dispose(): void {
    this.panel?.dispose();
    disposeAll(this.panelDisposables);
    super.dispose();
  }
}
