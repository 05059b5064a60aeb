import * as vscode from 'vscode';
import { renderWebviewHtml, webviewOptions } from '../common/html';
import { Disposable, disposeAll, type IDisposable } from '../common/lifecycle';
import { MessageEndpoint } from '../common/messageEndpoint';
import { webviewPort } from '../common/webviewPort';
import type { Episode } from '../rpc/protocol';
import { EpisodeNotifications, EpisodeRequests, type EpisodeViewState } from './episodeMessages';

/**
 * The read-only view of one episode (a webview panel in the editor area): the task, every
 * step's observation, the tips in its prompt, the action, rewards, and the tip the episode
 * wrote, with links from tips to the Memory Tips view. One panel, reused: selecting another
 * episode replaces what it shows, like a preview.
 */
export class EpisodePanel extends Disposable {
  static readonly viewType = 'empo2.episode';
  private panel: vscode.WebviewPanel | undefined;
  private endpoint: MessageEndpoint | undefined;
  private panelDisposables: IDisposable[] = [];
  private shown: EpisodeViewState | undefined;

  constructor(
    private readonly extensionUri: vscode.Uri,
    private readonly revealTip: (tipId: string) => Promise<void>,
  ) {
    super();
  }

  /** The episode on screen, if the panel is open (tests read it). */
  get current(): EpisodeViewState | undefined {
    return this.panel ? this.shown : undefined;
  }

  show(runId: string, episode: Episode, focusStep?: number, preserveFocus = true): void {
    const state: EpisodeViewState = { runId, episode, ...(focusStep !== undefined ? { focusStep } : {}) };
    this.shown = state;
    const title = `Episode ${episode.id}`;
    if (this.panel && this.endpoint) {
      this.panel.title = title;
      this.endpoint.sendNotification(EpisodeNotifications.show, state);
      this.panel.reveal(undefined, preserveFocus);
      return;
    }
    const panel = vscode.window.createWebviewPanel(
      EpisodePanel.viewType,
      title,
      { viewColumn: vscode.ViewColumn.Active, preserveFocus },
      { ...webviewOptions(this.extensionUri), retainContextWhenHidden: true, enableFindWidget: true },
    );
    panel.iconPath = vscode.Uri.joinPath(this.extensionUri, 'media', 'empo2.png');
    const endpoint = new MessageEndpoint(webviewPort(panel.webview), { awaitPeerReady: true });
    this.panel = panel;
    this.endpoint = endpoint;
    this.panelDisposables.push(
      endpoint,
      endpoint.onRequest(EpisodeRequests.revealTip, ({ tipId }) => this.revealTip(tipId)),
      panel.onDidDispose(() => {
        disposeAll(this.panelDisposables);
        this.panel = undefined;
        this.endpoint = undefined;
      }),
    );
    panel.webview.html = renderWebviewHtml(panel.webview, this.extensionUri, { entry: 'episode', title, initialState: state });
  }

  override dispose(): void {
    this.panel?.dispose();
    disposeAll(this.panelDisposables);
    super.dispose();
  }
}
