import * as vscode from 'vscode';
import { HostLog } from '../host/hostLog';
import { WorkspaceTrustGuard } from '../host/workspaceTrust';
import { Command } from './command';
import { showNotInThisBuild } from './notices';

// Host lifecycle commands. Starting a host checks Workspace Trust first; the launcher itself
// (spawn `empo2-host serve`, token, ready line, reconnect) comes with the protocol client.

export class StartHostCommand implements Command {
  static readonly id = 'empo2.startHost';
  readonly id = StartHostCommand.id;

  constructor(
    private readonly trust: WorkspaceTrustGuard,
    private readonly hostLog: HostLog,
  ) {}

  async execute(): Promise<void> {
    if (await this.trust.ensureTrusted('Starting the training host')) {
      await showNotInThisBuild('Starting the training host', this.hostLog);
    }
  }
}

export class RestartHostCommand implements Command {
  static readonly id = 'empo2.restartHost';
  readonly id = RestartHostCommand.id;

  constructor(
    private readonly trust: WorkspaceTrustGuard,
    private readonly hostLog: HostLog,
  ) {}

  async execute(): Promise<void> {
    if (await this.trust.ensureTrusted('Restarting the training host')) {
      await showNotInThisBuild('Restarting the training host', this.hostLog);
    }
  }
}

export class StopHostCommand implements Command {
  static readonly id = 'empo2.stopHost';
  readonly id = StopHostCommand.id;

  constructor(private readonly hostLog: HostLog) {}

  async execute(): Promise<void> {
    this.hostLog.info('Stop Host requested; no host is running.');
    await vscode.window.showInformationMessage('EMPO²: no training host is running.');
  }
}

export class ConnectRemoteCommand implements Command {
  static readonly id = 'empo2.connectRemote';
  readonly id = ConnectRemoteCommand.id;

  constructor(private readonly hostLog: HostLog) {}

  async execute(): Promise<void> {
    await showNotInThisBuild('Connecting to a remote host', this.hostLog);
  }
}
