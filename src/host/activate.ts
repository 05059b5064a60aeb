import * as path from 'node:path';
import * as vscode from 'vscode';
import { registerCommands } from '../common/command';
import { folderStateFile } from '../common/folderState';
import { Settings } from '../common/settings';
import { ConnectionNotices } from './connectionNotices';
import {
  ConnectRemoteCommand,
  ReconnectCommand,
  RestartHostCommand,
  StartHostCommand,
  StopHostCommand,
  type BeforeHostStop,
} from './hostCommands';
import { HostLog } from './hostLog';
import { HostManager } from './hostManager';
import { HostStateModel } from './hostState';
import { RunRoots } from './runRoots';
import { ShowHostLogCommand } from './showHostLog';
import { WorkspaceTrustGuard } from './workspaceTrust';

/** The window's host and what every later feature takes from it. */
export interface HostFeature {
  readonly version: string;
  readonly settings: Settings;
  readonly hostLog: HostLog;
  readonly hostState: HostStateModel;
  readonly trust: WorkspaceTrustGuard;
  readonly host: HostManager;
  /** The window's workspace folder ('' when none is open): what it remembers is kept per folder. */
  readonly folder: string;
  readonly globalStorage: string;
}

/** The host of this window: its log, state, connection notices and context keys, Show Host Log. */
export function activateHost(context: vscode.ExtensionContext): HostFeature {
  const version = (context.extension.packageJSON as { version: string }).version;
  const settings = new Settings();
  const hostLog = new HostLog();
  const hostState = new HostStateModel();
  const trust = new WorkspaceTrustGuard(vscode.workspace, vscode.window, vscode.commands, ConnectRemoteCommand.id);
  const folder = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath ?? '';
  const globalStorage = context.globalStorageUri.fsPath;
  const host = new HostManager(hostState, hostLog, settings, {
    extensionVersion: version,
    projectRoot: context.extensionUri.fsPath,
    secrets: context.secrets,
    runRoots: new RunRoots(
      settings,
      path.join(globalStorage, 'runs'),
      folderStateFile(globalStorage, 'run-roots', folder),
      context.workspaceState,
    ),
  });
  context.subscriptions.push(
    hostLog,
    hostState,
    host,
    new ConnectionNotices(host.health, host.reconnector, hostLog, host.onDidFail, host.state),
    host.state.onDidChange((state) => void vscode.commands.executeCommand('setContext', 'empo2.hostState', state)),
    // "Reconnect to Host" applies while the link is down (reconnecting, or lost after the retries).
    host.health.onDidChange(
      (health) => void vscode.commands.executeCommand('setContext', 'empo2.connection', health.kind),
    ),
    registerCommands([new ShowHostLogCommand({ hostLog })]),
  );
  void vscode.commands.executeCommand('setContext', 'empo2.hostState', host.state.state);
  void vscode.commands.executeCommand('setContext', 'empo2.connection', host.health.health.kind);
  return { version, settings, hostLog, hostState, trust, host, folder, globalStorage };
}

/** Start, Stop, Restart, Connect to Remote and Reconnect: a stop asks `beforeStop` first (the run
 *  guard, which needs the runs, so these come after them). */
export function activateHostCommands(
  context: vscode.ExtensionContext,
  { trust, host, hostLog, settings }: HostFeature,
  beforeStop: BeforeHostStop,
): void {
  const services = { trust, host, hostLog, settings, beforeStop };
  context.subscriptions.push(
    registerCommands(
      [StartHostCommand, StopHostCommand, RestartHostCommand, ConnectRemoteCommand, ReconnectCommand].map(
        (Host) => new Host(services),
      ),
    ),
  );
}
