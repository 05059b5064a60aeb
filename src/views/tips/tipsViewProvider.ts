import * as vscode from 'vscode';
import { Disposable, disposeAll, IDisposable } from '../../common/lifecycle';
import { HostStateModel } from '../../host/hostState';
import { renderWebviewHtml, webviewOptions } from '../../webviews/html';
import { MessageEndpoint } from '../../webviews/messageEndpoint';
import { webviewPort } from '../../webviews/webviewPort';
import { TIPS_PANEL_COMMANDS, TipsInitialState, TipsNotifications, TipsRequests } from './tipsMessages';

/** The Memory Tips view: a lit webview, fed by the host's memory.* messages (later). */
export class TipsViewProvider extends Disposable implements vscode.WebviewViewProvider {
  static readonly viewType = 'empo2.tips';
  private viewDisposables: IDisposable[] = [];

  constructor(
    private readonly extensionUri: vscode.Uri,
    private readonly hostState: HostStateModel,
  ) {
    super();
  }

  resolveWebviewView(view: vscode.WebviewView): void {
    // VS Code resolves the view again after it was hidden and disposed: start from scratch.
    disposeAll(this.viewDisposables);
    const webview = view.webview;
    webview.options = webviewOptions(this.extensionUri);

    const endpoint = new MessageEndpoint(webviewPort(webview), { awaitPeerReady: true });
    this.viewDisposables.push(
      endpoint,
      endpoint.onRequest(TipsRequests.runCommand, async ({ command }) => {
        if (!(TIPS_PANEL_COMMANDS as readonly string[]).includes(command)) {
          throw new Error(`the tips panel may not run '${command}'`);
        }
        await vscode.commands.executeCommand(command);
      }),
      this.hostState.onDidChange((state) => endpoint.sendNotification(TipsNotifications.hostStateChanged, { state })),
      view.onDidDispose(() => disposeAll(this.viewDisposables)),
    );

    const initialState: TipsInitialState = { hostState: this.hostState.state };
    webview.html = renderWebviewHtml(webview, this.extensionUri, { entry: 'tips', title: 'Memory Tips', initialState });
  }

  override dispose(): void {
    disposeAll(this.viewDisposables);
    super.dispose();
  }
}
