import * as vscode from 'vscode';
import type { Event } from '../common/event';
import { Disposable } from '../common/lifecycle';
import { describeHealth, type ConnectionHealthModel } from './connectionHealth';
import { ConnectRemoteCommand, ReconnectCommand, RestartHostCommand, StartHostCommand } from './hostCommands';
import type { HostLog } from './hostLog';
import type { HostFailure } from './hostManager';
import type { HostState, HostStateModel } from './hostState';
import { HOST_STOPPED_MESSAGE, stoppedByItself } from './hostStopped';
import { describeTarget, type Reconnector, type ReconnectTarget } from './reconnector';
import { CONNECT_REMOTE } from './workspaceTrust';

// What a person is told when the link to the host drops: nothing for a blip (the status bar and
// the views show "reconnecting…" at once); a progress notification once it has been down for a
// few seconds, which closes by itself when the link is back; and, once the fast retries are
// spent, a message with the way out that fits the host: Reconnect or Connect to Another Host for
// a remote host (it keeps training on its own; nothing here offers to install a local one),
// Restart Host for the host this window spawned. And when a spawned host dies or does not start:
// the last lines of its log, with Restart Host; when it stops by itself (exit 0, not Stop Host:
// Ctrl-C in its terminal), that it stopped and how to go on (hostStopped.ts).

/** A link down this long gets a notification. */
export const LOST_NOTICE_MS = 5_000;

export const RECONNECT = 'Reconnect';
export const CONNECT_ANOTHER = 'Connect to Another Host';
const RESTART = 'Restart Host';
const START = 'Start Host';
const SHOW_LOG = 'Show Host Log';

export class ConnectionNotices extends Disposable {
  private noticeTimer: ReturnType<typeof setTimeout> | undefined;
  private progressShown = false;

  constructor(
    private readonly health: ConnectionHealthModel,
    reconnector: Reconnector,
    private readonly log: HostLog,
    failures: Event<HostFailure>,
    state: HostStateModel,
  ) {
    super();
    let previous: HostState = state.state;
    this._register(
      state.onDidChange((next) => {
        if (stoppedByItself(previous, next)) {
          void this.reportStopped();
        }
        previous = next;
      }),
    );
    this._register(
      health.onDidChange((h) => {
        if (h.kind === 'reconnecting' && this.noticeTimer === undefined && !this.progressShown) {
          this.noticeTimer = setTimeout(() => this.showProgress(), LOST_NOTICE_MS);
        } else if (h.kind === 'connected' || h.kind === 'none') {
          clearTimeout(this.noticeTimer);
          this.noticeTimer = undefined;
        }
      }),
    );
    this._register(reconnector.onDidLose((target) => void this.offerWayOut(target)));
    this._register(failures((failure) => void this.reportFailure(failure)));
    this._register({ dispose: () => clearTimeout(this.noticeTimer) });
  }

  private showProgress(): void {
    this.noticeTimer = undefined;
    if (!this.health.isInterrupted) {
      return;
    }
    this.progressShown = true;
    void vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: 'EMPO²: connection to the training host lost' },
      (progress) =>
        new Promise<void>((resolve) => {
          const remote =
            this.health.health.kind !== 'none' && 'remote' in this.health.health && this.health.health.remote;
          const suffix = remote ? ' Training goes on on the host.' : '';
          const update = () => progress.report({ message: `${describeHealth(this.health.health)}.${suffix}` });
          update();
          const ticker = setInterval(update, 1_000);
          const done = () => {
            clearInterval(ticker);
            subscription.dispose();
            this.progressShown = false;
            resolve();
          };
          const subscription = this.health.onDidChange((h) => {
            if (h.kind === 'connected' || h.kind === 'none' || h.kind === 'lost') {
              done(); // connected: nothing to say; lost: offerWayOut says it
            }
          });
        }),
    );
  }

  private async offerWayOut(target: ReconnectTarget): Promise<void> {
    const h = this.health.health;
    const why = h.kind === 'lost' && h.reason ? ` (${h.reason})` : '';
    const background = h.kind === 'lost' && h.nextTryAt !== undefined ? ' EMPO² keeps trying in the background.' : '';
    const message = target.remote
      ? `EMPO²: cannot reach ${describeTarget(target)}${why}. A run there keeps training; check the tunnel or the network.${background}`
      : `EMPO²: lost the connection to the training host this window started${why}.`;
    const actions = target.remote ? [RECONNECT, CONNECT_ANOTHER, SHOW_LOG] : [RESTART, SHOW_LOG];
    const choice = await vscode.window.showWarningMessage(message, ...actions);
    if (choice === RECONNECT) {
      await vscode.commands.executeCommand(ReconnectCommand.id);
    } else if (choice === CONNECT_ANOTHER) {
      await vscode.commands.executeCommand(ConnectRemoteCommand.id);
    } else if (choice === RESTART) {
      await vscode.commands.executeCommand(RestartHostCommand.id);
    } else if (choice === SHOW_LOG) {
      this.log.show();
    }
  }

  private async reportStopped(): Promise<void> {
    const choice = await vscode.window.showWarningMessage(HOST_STOPPED_MESSAGE, START, SHOW_LOG);
    if (choice === START) {
      await vscode.commands.executeCommand(StartHostCommand.id);
    } else if (choice === SHOW_LOG) {
      this.log.show();
    }
  }

  /** An error message with the last lines of the host's log, and the action that helps. */
  private async reportFailure({ what, stderrTail, remote }: HostFailure): Promise<void> {
    const lastLines = stderrTail.trim().split('\n').filter(Boolean).slice(-3).join(' ⏎ ');
    const message = `EMPO²: ${what}.${lastLines ? ` Last lines of its log: ${lastLines}` : ''}`;
    const actions = remote ? [CONNECT_REMOTE, SHOW_LOG] : [RESTART, SHOW_LOG];
    const choice = await vscode.window.showErrorMessage(message, ...actions);
    if (choice === RESTART) {
      await vscode.commands.executeCommand(RestartHostCommand.id);
    } else if (choice === CONNECT_REMOTE) {
      await vscode.commands.executeCommand(ConnectRemoteCommand.id);
    } else if (choice === SHOW_LOG) {
      this.log.show();
    }
  }
}
