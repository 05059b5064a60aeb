import * as vscode from 'vscode';
import * as path from 'node:path';
import type { Command } from '../common/command';
import type { Settings } from '../common/settings';
import type { HostLog } from '../host/hostLog';
import type { HostManager } from '../host/hostManager';
import { ensureHost, showFailure } from '../host/notices';
import type { WorkspaceTrustGuard } from '../host/workspaceTrust';
import { isRpcError } from '../rpc/errors';
import { Requests } from '../rpc/methods';
import { ErrorCodes, type RunStatus } from '../rpc/protocol';
import type { RunsModel } from './runsModel';

const ADD_ROOT = 'Restart Host with This Root';
const METRICS_ONLY = 'Show Its Metrics Only';

/**
 * Opens a run folder (finished, stopped or crashed) in the host with run.open: its trajectories,
 * tips and metrics become browsable, and it can be resumed. Starts in the run root.
 */
export class OpenRunFolderCommand implements Command {
  static readonly id = 'empo2.openRunFolder';
  readonly id = OpenRunFolderCommand.id;

  constructor(
    private readonly settings: Settings,
    private readonly hostLog: HostLog,
    private readonly trust: WorkspaceTrustGuard,
    private readonly host: HostManager,
    private readonly runs: RunsModel,
  ) {}

  /** Argument (scripts, tests): the folder's Uri or path skips the picker. */
  async execute(arg?: unknown): Promise<RunStatus | undefined> {
    const folder =
      arg instanceof vscode.Uri
        ? arg
        : typeof arg === 'string'
          ? vscode.Uri.file(arg)
          : (
              await vscode.window.showOpenDialog({
                title: 'EMPO²: Open Run Folder',
                openLabel: 'Open Run',
                canSelectFiles: false,
                canSelectFolders: true,
                canSelectMany: false,
                defaultUri: await this.existingRunRoot(),
              })
            )?.[0];
    if (!folder) {
      return undefined;
    }
    this.hostLog.info(`Run folder picked: ${folder.fsPath}`);
    if (!(await ensureHost(this.host, this.trust, 'Reading a run folder'))) {
      return undefined;
    }
    try {
      const { run } = await this.host.request(Requests.runOpen, { path: folder.fsPath }, { timeoutMs: 120_000 });
      this.runs.absorbStatus(run);
      this.runs.select(run.runId);
      void vscode.commands.executeCommand('empo2.trajectories.focus');
      return run;
    } catch (error) {
      if (isRpcError(error, ErrorCodes.PathNotAllowed) && !this.host.isRemote) {
        return this.outsideRoots(folder);
      }
      await showFailure(`Opening ${folder.fsPath}`, error);
      return undefined;
    }
  }

  /** The host reads only its run roots; offer to add the folder's parent, or just the metrics. */
  private async outsideRoots(folder: vscode.Uri): Promise<RunStatus | undefined> {
    const parent = path.dirname(folder.fsPath);
    const choice = await vscode.window.showWarningMessage(
      `EMPO²: ${folder.fsPath} is outside the host's run roots (${this.host.runRoots.list().join(', ')}), and the host reads no other folders. ` +
        `Restart the host with ${parent} as another run root?`,
      ADD_ROOT,
      METRICS_ONLY,
    );
    if (choice === METRICS_ONLY) {
      await vscode.commands.executeCommand('empo2.showMetrics', folder);
    } else if (choice === ADD_ROOT) {
      await this.host.runRoots.add(parent);
      await this.host.stop();
      if (await this.host.start()) {
        return this.execute(folder);
      }
    }
    return undefined;
  }

  /** The run root when it exists; otherwise let the dialog choose its own start. */
  private async existingRunRoot(): Promise<vscode.Uri | undefined> {
    const runRoot = this.settings.runRoot;
    if (!runRoot) {
      return undefined;
    }
    try {
      const stat = await vscode.workspace.fs.stat(runRoot);
      return stat.type & vscode.FileType.Directory ? runRoot : undefined;
    } catch {
      return undefined;
    }
  }
}
