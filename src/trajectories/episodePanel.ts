import type * as vscode from 'vscode';
import type { IDisposable } from '../common/lifecycle';
import type { MessageEndpoint } from '../common/messageEndpoint';
import { SingleWebviewPanel } from '../common/webviewPanel';
import { EpisodeNotifications, EpisodeRequests, type EpisodeViewState } from './episodeMessages';
import type { LoadedEpisode } from './trajectoryData';

/**
 * The read-only view of one episode (a webview panel in the editor area): the task, every
 * step's observation, the tips in its prompt, the action, rewards, and the tip the episode
 * wrote, with links from tips to the Memory Tips view. One panel, reused: selecting another
 * episode replaces what it shows, like a preview.
 */
export class EpisodePanel extends SingleWebviewPanel {
  static readonly viewType = 'empo2.episode';
  private shown: EpisodeViewState | undefined;

  constructor(
    extensionUri: vscode.Uri,
    private readonly revealTip: (tipId: string) => Promise<void>,
  ) {
    super(extensionUri, { viewType: EpisodePanel.viewType, entry: 'episode', enableFindWidget: true });
  }

  /** The episode on screen, if the panel is open (tests read it). */
  get current(): EpisodeViewState | undefined {
    return this.isOpen ? this.shown : undefined;
  }

  show(runId: string, loaded: LoadedEpisode, focusStep?: number, preserveFocus = true): void {
    const { episode, provisional } = loaded;
    const state: EpisodeViewState = {
      runId,
      episode,
      ...(focusStep !== undefined ? { focusStep } : {}),
      ...(provisional ? { provisional } : {}),
    };
    this.shown = state;
    if (!this.openPanel(`Episode ${episode.id}`, state, preserveFocus)) {
      this.endpoint?.sendNotification(EpisodeNotifications.show, state);
    }
  }

  protected wire(endpoint: MessageEndpoint): IDisposable[] {
    return [endpoint.onRequest(EpisodeRequests.revealTip, ({ tipId }) => this.revealTip(tipId))];
  }
}
