import * as vscode from 'vscode';
import { registerCommands } from './commands/command';
import { ConnectRemoteCommand, RestartHostCommand, StartHostCommand, StopHostCommand } from './commands/hostCommands';
import { OpenRunFolderCommand } from './commands/openRunFolder';
import { RefreshCommand } from './commands/refresh';
import { NewRunCommand, PauseRunCommand, ResumeRunCommand, ShowMetricsCommand, StopRunCommand } from './commands/runCommands';
import { ShowHostLogCommand } from './commands/showHostLog';
import { AddTipCommand, DeleteTipCommand, EditTipCommand, ShowTipHistoryCommand } from './commands/tipCommands';
import { Settings } from './config/settings';
import { HostLog } from './host/hostLog';
import { HostStateModel } from './host/hostState';
import { WorkspaceTrustGuard } from './host/workspaceTrust';
import { HostStatusBar } from './statusBar/hostStatusBar';
import { TipsViewProvider } from './views/tips/tipsViewProvider';
import { TrajectoryTreeProvider } from './views/trajectories/trajectoryTreeProvider';

// Services are built here, once each, in dependency order, and handed to whoever needs them.

export function activate(context: vscode.ExtensionContext): void {
  const settings = new Settings();
  const hostLog = new HostLog();
  const hostState = new HostStateModel();
  const trust = new WorkspaceTrustGuard(vscode.workspace, vscode.window, vscode.commands);
  const trajectories = new TrajectoryTreeProvider();
  const tips = new TipsViewProvider(context.extensionUri, hostState);

  context.subscriptions.push(
    hostLog,
    hostState,
    trajectories,
    tips,
    new HostStatusBar(hostState),
    vscode.window.createTreeView(TrajectoryTreeProvider.viewId, { treeDataProvider: trajectories, showCollapseAll: true }),
    vscode.window.registerWebviewViewProvider(TipsViewProvider.viewType, tips),
    registerCommands([
      new StartHostCommand(trust, hostLog),
      new StopHostCommand(hostLog),
      new RestartHostCommand(trust, hostLog),
      new ConnectRemoteCommand(hostLog),
      new NewRunCommand(trust),
      new PauseRunCommand(),
      new ResumeRunCommand(),
      new StopRunCommand(),
      new OpenRunFolderCommand(settings, hostLog),
      new ShowMetricsCommand(),
      new RefreshCommand(trajectories),
      new AddTipCommand(),
      new EditTipCommand(),
      new DeleteTipCommand(),
      new ShowTipHistoryCommand(),
      new ShowHostLogCommand(hostLog),
    ]),
  );

  const version = (context.extension.packageJSON as { version: string }).version;
  hostLog.info(`EMPO² Studio ${version} is active. The training host is not running.`);
}

export function deactivate(): void {
  // Everything lives in context.subscriptions; VS Code disposes it after this returns.
}
