import * as vscode from 'vscode';
import * as path from 'node:path';
import { CommandBase, performAction } from '../common/command';
import { ensureHost, showFailure } from '../host/notices';
import { isRpcError } from '../rpc/errors';
import { Requests } from '../rpc/methods';
import { ErrorCodes, type RunStatus } from '../rpc/protocol';
import { ShowMetricsCommand } from './metricsCommands';
import type { RunServices } from './runCommands';

const ADD_ROOT = 'Restart Host with This Root';
const METRICS_ONLY = 'Show Its Metrics Only';

/**
 * Opens a run folder (finished, stopped or crashed) in the host with run.open: its trajectories,
 * tips and metrics become browsable, and it can be resumed. Starts in the run root.
 */
export class OpenRunFolderCommand extends CommandBase<RunServices> {
  static readonly id = 'empo2.openRunFolder';

  /** Argument (scripts, tests): the folder's Uri or path skips the picker. */
  execute(arg?: unknown): Promise<RunStatus | undefined> {
    const { hostLog, trust, host, runs } = this.services;
    return performAction({
      target: async () => {
        const folder = await this.folder(arg);
        if (folder) {
          hostLog.info(`Run folder picked: ${folder.fsPath}`);
        }
        return folder && (await ensureHost(host, trust, 'Reading a run folder')) ? folder : undefined;
      },
      request: async (folder) =>
        (await host.request(Requests.runOpen, { path: folder.fsPath }, { timeoutMs: 120_000 })).run,
      report: (run) => {
        runs.absorbStatus(run);
        runs.select(run.runId);
        void vscode.commands.executeCommand('empo2.trajectories.focus');
      },
      failed: async (error, folder) => {
        if (isRpcError(error, ErrorCodes.PathNotAllowed) && !host.isRemote) {
          return this.outsideRoots(folder);
        }
        await showFailure(`Opening ${folder.fsPath}`, error);
        return undefined;
      },
    });
  }

  /** The argument's folder, else one picked in a dialog that starts in the run root. */
  private async folder(arg: unknown): Promise<vscode.Uri | undefined> {
    if (arg instanceof vscode.Uri) {
      return arg;
    }
    if (typeof arg === 'string') {
      return vscode.Uri.file(arg);
    }
    const picked = await vscode.window.showOpenDialog({
      title: 'EMPO²: Open Run Folder',
      openLabel: 'Open Run',
      canSelectFiles: false,
      canSelectFolders: true,
      canSelectMany: false,
      defaultUri: await this.existingRunRoot(),
    });
    return picked?.[0];
  }

  /** The host reads only its run roots; offer to add the folder's parent, or just the metrics. */
  private async outsideRoots(folder: vscode.Uri): Promise<RunStatus | undefined> {
    const parent = path.dirname(folder.fsPath);
    const choice = await vscode.window.showWarningMessage(
      `EMPO²: ${folder.fsPath} is outside the host's run roots (${this.services.host.runRoots.list().join(', ')}), and the host reads no other folders. ` +
        `Restart the host with ${parent} as another run root?`,
      ADD_ROOT,
      METRICS_ONLY,
    );
    if (choice === METRICS_ONLY) {
      await vscode.commands.executeCommand(ShowMetricsCommand.id, folder);
    } else if (choice === ADD_ROOT) {
      this.services.host.runRoots.add(parent);
      await this.services.host.stop();
      if (await this.services.host.start()) {
        return this.execute(folder);
      }
    }
    return undefined;
  }

  /** The run root when it exists; otherwise let the dialog choose its own start. */
  private async existingRunRoot(): Promise<vscode.Uri | undefined> {
    const runRoot = this.services.settings.runRoot;
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
