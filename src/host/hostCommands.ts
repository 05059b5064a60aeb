import * as vscode from 'vscode';
import { CommandBase } from '../common/command';
import type { Settings } from '../common/settings';
import { ConnectError } from '../rpc/wsTransport';
import type { HostLog } from './hostLog';
import type { HostManager } from './hostManager';
import { connectFailure } from './hostSession';
import { switchToRemote } from './remoteSwitch';
import type { WorkspaceTrustGuard } from './workspaceTrust';

// Host lifecycle commands. Starting a host runs the workspace's Python, so it checks Workspace
// Trust first; connecting to a remote host does not (nothing runs here). Each command that stops
// a host spawned here asks the run guard first, since its run would be interrupted.

/** What the host commands work with (activate() builds it once). */
export interface HostServices {
  readonly trust: WorkspaceTrustGuard;
  readonly host: HostManager;
  readonly hostLog: HostLog;
  readonly settings: Settings;
  readonly beforeStop: BeforeHostStop;
}

export class StartHostCommand extends CommandBase<HostServices> {
  static readonly id = 'empo2.startHost';

  async execute(): Promise<void> {
    const { trust, host } = this.services;
    if (host.current && !host.isRemote) {
      void vscode.window.showInformationMessage('EMPO²: the training host is already running.');
      return;
    }
    if (await trust.ensureTrusted('Starting the training host')) {
      await host.start();
    }
  }
}

/** What is about to stop the host: Stop Host, Restart Host, or Connect to Remote Host. */
export type HostStopAction = 'stop' | 'restart' | 'connect';

/**
 * Asked before a command stops a host (src/runGuard/ asks about a training run): undefined
 * cancels; `now` skips waiting for the live run's iteration boundary.
 */
export type BeforeHostStop = (action: HostStopAction) => Promise<{ readonly now: boolean } | undefined>;

/** Stops the host once beforeStop agreed (asked only while a host runs); false: cancelled. */
async function stopAfterAsking(
  { host, beforeStop }: HostServices,
  action: 'stop' | 'restart',
  stop: (now: boolean) => Thenable<void>,
): Promise<boolean> {
  const choice = host.current ? await beforeStop(action) : { now: false };
  if (!choice) {
    return false;
  }
  await stop(choice.now);
  return true;
}

export class RestartHostCommand extends CommandBase<HostServices> {
  static readonly id = 'empo2.restartHost';

  async execute(): Promise<void> {
    const { trust, host } = this.services;
    if (!(await trust.ensureTrusted('Restarting the training host'))) {
      return;
    }
    if (await stopAfterAsking(this.services, 'restart', (now) => host.stop({ now }))) {
      await host.start();
    }
  }
}

export class StopHostCommand extends CommandBase<HostServices> {
  static readonly id = 'empo2.stopHost';

  async execute(): Promise<void> {
    const { host, hostLog } = this.services;
    if (!host.current && host.state.state === 'stopped') {
      hostLog.info('Stop Host requested; no host is running.');
      await vscode.window.showInformationMessage('EMPO²: no training host is running.');
      return;
    }
    await stopAfterAsking(this.services, 'stop', (now) =>
      vscode.window.withProgress(
        { location: vscode.ProgressLocation.Notification, title: 'EMPO²: stopping the training host' },
        () => host.stop({ now }),
      ),
    );
  }
}

/** Dials the host again now after its connection dropped (a fresh round of fast attempts). */
export class ReconnectCommand extends CommandBase<HostServices> {
  static readonly id = 'empo2.reconnect';

  async execute(): Promise<void> {
    const { host } = this.services;
    if (host.current) {
      void vscode.window.showInformationMessage('EMPO²: the training host is connected.');
    } else if (!host.reconnect()) {
      void vscode.window.showInformationMessage(
        'EMPO²: there is no host to reconnect to; start one, or connect to a remote host.',
      );
    }
  }
}

export class ConnectRemoteCommand extends CommandBase<HostServices> {
  static readonly id = 'empo2.connectRemote';

  /** Arguments (for scripts and tests): a URL and a token skip the prompts. */
  async execute(urlArg?: unknown, tokenArg?: unknown): Promise<boolean> {
    const { host, settings, beforeStop } = this.services;
    const url =
      typeof urlArg === 'string'
        ? urlArg
        : await vscode.window.showInputBox({
            title: 'EMPO²: Connect to Remote Host',
            prompt:
              'WebSocket URL of a running `empo2-host serve` (for example through an SSH tunnel)' +
              (host.current && !host.isRemote ? '. The host running here stops once the remote one answers.' : ''),
            value: settings.remoteUrl || 'ws://127.0.0.1:8765',
            ignoreFocusOut: true,
            validateInput: (value) =>
              /^wss?:\/\/[^\s/]+/.test(value.trim()) ? undefined : 'A ws:// or wss:// URL, e.g. ws://127.0.0.1:8765',
          });
    if (!url) {
      return false;
    }
    const trimmed = url.trim();
    let token = typeof tokenArg === 'string' ? tokenArg : await host.remoteTokens.get(trimmed);
    for (let attempt = 0; attempt < 3; attempt++) {
      if (!token) {
        token = await vscode.window.showInputBox({
          title: `EMPO²: token of ${trimmed}`,
          prompt: "The EMPO2_HOST_TOKEN the remote host was started with; it is kept in VS Code's secret storage.",
          password: true,
          ignoreFocusOut: true,
        });
        if (!token) {
          return false;
        }
      }
      const tried = token;
      try {
        const connected = await switchToRemote({
          connected: host.current ? (host.isRemote ? 'remote' : 'local') : 'none',
          probe: () => host.probeRemote(trimmed, tried),
          beforeStop: () => beforeStop('connect'),
          connect: async (now) => {
            await host.connectRemote(trimmed, tried, { now });
          },
        });
        if (!connected) {
          return false;
        }
        await host.remoteTokens.store(trimmed, token);
        if (settings.remoteUrl !== trimmed) {
          await vscode.workspace
            .getConfiguration('empo2')
            .update('remoteUrl', trimmed, vscode.ConfigurationTarget.Global);
        }
        return true;
      } catch (error) {
        if (error instanceof ConnectError && error.status === 401) {
          await host.remoteTokens.forget(trimmed);
          void vscode.window.showWarningMessage(`EMPO²: ${trimmed} refused the token; enter it again.`);
          token = undefined;
          continue;
        }
        void vscode.window.showErrorMessage(`EMPO²: ${connectFailure(trimmed, error)}.`);
        return false;
      }
    }
    return false;
  }
}
