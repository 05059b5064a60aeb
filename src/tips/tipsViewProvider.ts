import * as vscode from 'vscode';
import { renderWebviewHtml, webviewOptions } from '../common/html';
import { Disposable, disposeAll, type IDisposable } from '../common/lifecycle';
import { MessageEndpoint } from '../common/messageEndpoint';
import { webviewPort } from '../common/webviewPort';
import { describeHealth, type ConnectionHealthModel } from '../host/connectionHealth';
import type { HostStateModel } from '../host/hostState';
import type { RunsModel } from '../runs/runsModel';
import { confirmTipDeletion } from './tipCommands';
import {
  type ConnectionView,
  TIPS_PANEL_COMMANDS,
  type TipsInitialState,
  TipsNotifications,
  TipsRequests,
  type TipsSnapshot,
} from './tipsMessages';
import type { TipsModel } from './tipsModel';
import { configuredVariations } from './variations';

/** Opens an episode (the episode view); given by whoever owns that view. */
export type OpenEpisode = (runId: string, episodeId: string) => Promise<void>;

/**
 * The Memory Tips view: a lit webview fed by TipsModel. Edits go back through the model
 * (memory.update with the expected version); conflicts are answered with both texts and the
 * panel lets the person choose.
 */
export class TipsViewProvider extends Disposable implements vscode.WebviewViewProvider {
  static readonly viewType = 'empo2.tips';
  private viewDisposables: IDisposable[] = [];
  private view: vscode.WebviewView | undefined;
  private endpoint: MessageEndpoint | undefined;
  private pendingReveal: string | undefined;

  constructor(
    private readonly extensionUri: vscode.Uri,
    private readonly hostState: HostStateModel,
    private readonly health: ConnectionHealthModel,
    private readonly tips: TipsModel,
    private readonly runs: RunsModel,
    private readonly openEpisode: OpenEpisode,
  ) {
    super();
  }

  resolveWebviewView(view: vscode.WebviewView): void {
    // VS Code resolves the view again after it was hidden and disposed: start from scratch.
    disposeAll(this.viewDisposables);
    this.view = view;
    const webview = view.webview;
    webview.options = webviewOptions(this.extensionUri);

    const endpoint = new MessageEndpoint(webviewPort(webview), { awaitPeerReady: true, requestTimeoutMs: 60_000 });
    this.endpoint = endpoint;
    this.viewDisposables.push(
      endpoint,
      endpoint.onRequest(TipsRequests.runCommand, async ({ command }) => {
        if (!(TIPS_PANEL_COMMANDS as readonly string[]).includes(command)) {
          throw new Error(`the tips panel may not run '${command}'`);
        }
        await vscode.commands.executeCommand(command);
      }),
      endpoint.onRequest(TipsRequests.save, (edit) => this.tips.update(edit)),
      endpoint.onRequest(TipsRequests.add, ({ variationKey, text, editId }) =>
        this.tips.add(variationKey, text, undefined, editId),
      ),
      endpoint.onRequest(TipsRequests.delete, async (deletion) =>
        (await confirmTipDeletion(deletion.tipId, this.tips.get(deletion.tipId)))
          ? this.tips.delete(deletion)
          : undefined,
      ),
      endpoint.onRequest(TipsRequests.history, ({ tipId }) => this.tips.history(tipId)),
      endpoint.onRequest(TipsRequests.openEpisode, ({ runId, episodeId }) => this.openEpisode(runId, episodeId)),
      this.hostState.onDidChange((state) => endpoint.sendNotification(TipsNotifications.hostStateChanged, { state })),
      this.health.onDidChange(() => endpoint.sendNotification(TipsNotifications.connectionChanged, this.connection())),
      this.tips.onDidChange((change) => {
        if (change.kind === 'reset') {
          endpoint.sendNotification(TipsNotifications.reset, this.snapshot());
        } else {
          endpoint.sendNotification(TipsNotifications.changed, {
            runId: change.runId,
            changes: change.changes,
            variations: this.variations(),
          });
        }
      }),
      view.onDidDispose(() => {
        disposeAll(this.viewDisposables);
        this.view = undefined;
        this.endpoint = undefined;
      }),
    );

    const initialState: TipsInitialState = {
      hostState: this.hostState.state,
      connection: this.connection(),
      ...this.snapshot(),
    };
    webview.html = renderWebviewHtml(webview, this.extensionUri, { entry: 'tips', title: 'Memory Tips', initialState });
    if (this.pendingReveal) {
      endpoint.sendNotification(TipsNotifications.reveal, { tipId: this.pendingReveal });
      this.pendingReveal = undefined;
    }
  }

  /** Shows the panel scrolled to a tip (a link from the episode view). */
  async reveal(tipId: string): Promise<void> {
    if (this.endpoint && this.view?.visible) {
      this.endpoint.sendNotification(TipsNotifications.reveal, { tipId });
    } else {
      this.pendingReveal = tipId;
    }
    await vscode.commands.executeCommand(`${TipsViewProvider.viewType}.focus`);
    if (this.endpoint && this.pendingReveal) {
      this.endpoint.sendNotification(TipsNotifications.reveal, { tipId: this.pendingReveal });
      this.pendingReveal = undefined;
    }
  }

  private connection(): ConnectionView {
    const health = this.health.health;
    return health.kind === 'reconnecting' || health.kind === 'lost'
      ? { kind: health.kind, detail: describeHealth(health) }
      : { kind: health.kind };
  }

  private snapshot(): TipsSnapshot {
    return {
      runId: this.tips.currentRunId,
      tips: this.tips.list({ includeDeleted: true }), // the panel's "Show deleted" filter shows them
      variations: this.variations(),
      ...(this.tips.error ? { error: this.tips.error } : {}),
    };
  }

  private variations(): string[] {
    const run = this.tips.currentRunId ? this.runs.get(this.tips.currentRunId) : undefined;
    return this.tips.variations(configuredVariations(run?.config));
  }

  override dispose(): void {
    disposeAll(this.viewDisposables);
    super.dispose();
  }
}
