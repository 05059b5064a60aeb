import * as vscode from 'vscode';
import { existsSync, readdirSync } from 'node:fs';
import * as path from 'node:path';
import { CommandBase, noTarget, performAction } from '../common/command';
import type { Settings } from '../common/settings';
import type { HostLog } from '../host/hostLog';
import type { HostManager } from '../host/hostManager';
import { findHostInterpreter } from '../host/interpreterDialogs';
import type { RunsModel } from '../runs/runsModel';
import {
  noMirrorInRootMessage,
  noMirrorMessage,
  startTensorBoardProcess,
  TensorBoardError,
  TensorBoardServers,
} from './tensorboardServer';

// "Open in TensorBoard" for a run (its tensorboard/ folder) and for all runs of a run root: the
// TensorBoard of that folder (tensorboardServer.ts) shown in VS Code's Simple Browser.

export interface TensorBoardServices {
  readonly settings: Settings;
  readonly hostLog: HostLog;
  readonly host: HostManager;
  readonly runs: RunsModel;
  /** The folder that holds host/ (the extension's own folder): its .venv and the trackers' lock. */
  readonly projectRoot: string;
  readonly servers: TensorBoardServers;
}

/** The servers of a window, started from the host's Python (disposed with the window). */
export function tensorBoardServers(settings: Settings, hostLog: HostLog, projectRoot: string): TensorBoardServers {
  return new TensorBoardServers(async (logdir) => {
    const interpreter = await findHostInterpreter(settings, projectRoot, hostLog);
    if (!interpreter) {
      throw new TensorBoardError('EMPO²: no Python with the EMPO² host to run TensorBoard from.');
    }
    hostLog.info(
      `Starting TensorBoard: ${interpreter.python} -m tensorboard.main --logdir ${logdir} --host 127.0.0.1 --port 0`,
    );
    const running = await startTensorBoardProcess(interpreter.python, projectRoot, logdir);
    hostLog.info(`TensorBoard serves ${logdir} at ${running.url}`);
    return running;
  });
}

/** A run's id and folder: the argument's (a run id, a tree row, a folder Uri), else the current run. */
function runFolder(runs: RunsModel, arg: unknown): { runId: string; folder: string } | undefined {
  if (arg instanceof vscode.Uri) {
    return { runId: path.basename(arg.fsPath), folder: arg.fsPath };
  }
  const named =
    typeof arg === 'string'
      ? arg
      : typeof arg === 'object' && arg !== null && typeof (arg as { runId?: unknown }).runId === 'string'
        ? (arg as { runId: string }).runId
        : undefined;
  const entry = named !== undefined ? runs.get(named) : runs.current;
  return entry ? { runId: entry.info.runId, folder: entry.info.path } : undefined;
}

/** Whether some run folder directly under `root` has a tensorboard/ folder. */
function rootHasMirror(root: string): boolean {
  try {
    return readdirSync(root, { withFileTypes: true }).some(
      (entry) => entry.isDirectory() && existsSync(path.join(root, entry.name, 'tensorboard')),
    );
  } catch {
    return false;
  }
}

abstract class TensorBoardCommand extends CommandBase<TensorBoardServices> {
  /** Opens the TensorBoard of `logdir` in the Simple Browser; `what` names it in the progress title. */
  protected show(logdir: string | undefined, what: string): Promise<string | undefined> {
    return performAction({
      target: () => logdir,
      progress: () => `EMPO²: starting TensorBoard for ${what}`,
      request: (dir) => this.services.servers.open(dir),
      report: async (url) => {
        // In a browser (code-server, remote) a loopback address is the server's: asExternalUri
        // gives the address the person's browser reaches it at.
        const external = await vscode.env.asExternalUri(vscode.Uri.parse(url));
        await vscode.commands.executeCommand('simpleBrowser.show', external.toString(true));
      },
      failed: async (error) => {
        const message =
          error instanceof TensorBoardError
            ? error.message
            : `EMPO²: TensorBoard did not start: ${error instanceof Error ? error.message : String(error)}`;
        this.services.hostLog.warn(message);
        void vscode.window.showErrorMessage(message);
        return undefined;
      },
    });
  }
}

export class OpenInTensorBoardCommand extends TensorBoardCommand {
  static readonly id = 'empo2.openInTensorBoard';

  /** Argument: a run id, a run's tree row, or a run folder's Uri; else the current run. */
  execute(arg?: unknown): Promise<string | undefined> {
    const run = runFolder(this.services.runs, arg);
    if (!run) {
      return Promise.resolve(
        noTarget('EMPO²: no run to open in TensorBoard; open a run folder or select a run first.'),
      );
    }
    const logdir = path.join(run.folder, 'tensorboard');
    if (!existsSync(logdir)) {
      return Promise.resolve(noTarget(noMirrorMessage(run.runId)));
    }
    return this.show(logdir, `run ${run.runId}`);
  }
}

export class OpenRootInTensorBoardCommand extends TensorBoardCommand {
  static readonly id = 'empo2.openRootInTensorBoard';

  /** Argument: a run (its root is the folder it is in), or a root's Uri; else the run roots, picked when several. */
  async execute(arg?: unknown): Promise<string | undefined> {
    const root = await this.root(arg);
    if (!root) {
      return undefined;
    }
    if (!rootHasMirror(root)) {
      return noTarget(noMirrorInRootMessage(root));
    }
    return this.show(root, `the runs of ${root}`);
  }

  private async root(arg: unknown): Promise<string | undefined> {
    if (arg instanceof vscode.Uri) {
      return arg.fsPath;
    }
    const run = arg === undefined ? undefined : runFolder(this.services.runs, arg);
    if (run) {
      return path.dirname(run.folder);
    }
    const roots = this.services.host.runRoots.list();
    if (roots.length <= 1) {
      return roots[0];
    }
    return vscode.window.showQuickPick(roots, { title: 'EMPO²: open the runs of which run root in TensorBoard?' });
  }
}
