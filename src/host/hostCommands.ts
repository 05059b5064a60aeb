import * as vscode from 'vscode';
import type { Command } from '../common/command';
import type { Settings } from '../common/settings';
import { describeError } from '../rpc/errors';
import { ConnectError } from '../rpc/wsTransport';
import type { HostLog } from './hostLog';
import type { HostManager } from './hostManager';
import type { WorkspaceTrustGuard } from './workspaceTrust';

// Host lifecycle commands. Starting a host runs the workspace's Python, so it checks Workspace
// Trust first; connecting to a remote host does not (nothing runs here).

export class StartHostCommand implements Command {
  static readonly id = 'empo2.startHost';
  readonly id = StartHostCommand.id;

  constructor(
    private readonly trust: WorkspaceTrustGuard,
    private readonly host: HostManager,
  ) {}

  async execute(): Promise<void> {
    if (this.host.current && !this.host.isRemote) {
      void vscode.window.showInformationMessage('EMPO²: the training host is already running.');
      return;
    }
    if (await this.trust.ensureTrusted('Starting the training host')) {
      await this.host.start();
    }
  }
}

/**
 * Asked before Stop Host or Restart Host stops a host (src/runGuard/ asks about a training run):
 * undefined cancels; `now` skips waiting for the live run's iteration boundary.
 */
export type BeforeHostStop = (action: 'stop' | 'restart') => Promise<{ readonly now: boolean } | undefined>;

const noQuestions: BeforeHostStop = async () => ({ now: false });

export class RestartHostCommand implements Command {
  static readonly id = 'empo2.restartHost';
  readonly id = RestartHostCommand.id;

  constructor(
    private readonly trust: WorkspaceTrustGuard,
    private readonly host: HostManager,
    private readonly beforeStop: BeforeHostStop = noQuestions,
  ) {}

  async execute(): Promise<void> {
    if (!(await this.trust.ensureTrusted('Restarting the training host'))) {
      return;
    }
    const choice = this.host.current ? await this.beforeStop('restart') : { now: false };
    if (!choice) {
      return;
    }
    await this.host.stop({ now: choice.now });
    await this.host.start();
  }
}

export class StopHostCommand implements Command {
  static readonly id = 'empo2.stopHost';
  readonly id = StopHostCommand.id;

  constructor(
    private readonly host: HostManager,
    private readonly hostLog: HostLog,
    private readonly beforeStop: BeforeHostStop = noQuestions,
  ) {}

  async execute(): Promise<void> {
    if (!this.host.current && this.host.state.state === 'stopped') {
      this.hostLog.info('Stop Host requested; no host is running.');
      await vscode.window.showInformationMessage('EMPO²: no training host is running.');
      return;
    }
    const choice = this.host.current ? await this.beforeStop('stop') : { now: false };
    if (!choice) {
      return;
    }
    await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: 'EMPO²: stopping the training host' },
      () => this.host.stop({ now: choice.now }),
    );
  }
}

/** Dials the host again now after its connection dropped (a fresh round of fast attempts). */
export class ReconnectCommand implements Command {
  static readonly id = 'empo2.reconnect';
  readonly id = ReconnectCommand.id;

  constructor(private readonly host: HostManager) {}

  async execute(): Promise<void> {
    if (this.host.current) {
      void vscode.window.showInformationMessage('EMPO²: the training host is connected.');
    } else if (!this.host.reconnect()) {
      void vscode.window.showInformationMessage('EMPO²: there is no host to reconnect to; start one, or connect to a remote host.');
    }
  }
}

export class ConnectRemoteCommand implements Command {
  static readonly id = 'empo2.connectRemote';
  readonly id = ConnectRemoteCommand.id;

  constructor(
    private readonly host: HostManager,
    private readonly settings: Settings,
  ) {}

  /** Arguments (for scripts and tests): a URL and a token skip the prompts. */
  async execute(urlArg?: unknown, tokenArg?: unknown): Promise<boolean> {
    const url =
      typeof urlArg === 'string'
        ? urlArg
        : await vscode.window.showInputBox({
            title: 'EMPO²: Connect to Remote Host',
            prompt: 'WebSocket URL of a running `empo2-host serve` (for example through an SSH tunnel)',
            value: this.settings.remoteUrl || 'ws://127.0.0.1:8765',
            ignoreFocusOut: true,
            validateInput: (value) => (/^wss?:\/\/[^\s/]+/.test(value.trim()) ? undefined : 'A ws:// or wss:// URL, e.g. ws://127.0.0.1:8765'),
          });
    if (!url) {
      return false;
    }
    const trimmed = url.trim();
    let token = typeof tokenArg === 'string' ? tokenArg : await this.host.remoteTokens.get(trimmed);
    for (let attempt = 0; attempt < 3; attempt++) {
      if (!token) {
        token = await vscode.window.showInputBox({
          title: `EMPO²: token of ${trimmed}`,
          prompt: 'The EMPO2_HOST_TOKEN the remote host was started with; it is kept in VS Code\'s secret storage.',
          password: true,
          ignoreFocusOut: true,
        });
        if (!token) {
          return false;
        }
      }
      try {
        await this.host.connectRemote(trimmed, token);
        await this.host.remoteTokens.store(trimmed, token);
        if (this.settings.remoteUrl !== trimmed) {
          await vscode.workspace.getConfiguration('empo2').update('remoteUrl', trimmed, vscode.ConfigurationTarget.Global);
        }
        return true;
      } catch (error) {
        if (error instanceof ConnectError && error.status === 401) {
          await this.host.remoteTokens.forget(trimmed);
          void vscode.window.showWarningMessage(`EMPO²: ${trimmed} refused the token; enter it again.`);
          token = undefined;
          continue;
        }
        await vscode.window.showErrorMessage(`EMPO²: cannot connect to ${trimmed}: ${describeError(error)}`);
        return false;
      }
    }
    return false;
  }
}
