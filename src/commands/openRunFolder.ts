import * as vscode from 'vscode';
import { Settings } from '../config/settings';
import { HostLog } from '../host/hostLog';
import { Command } from './command';
import { showHostRequired } from './notices';

/** Picks a run folder (a finished or interrupted run) to open; starts in the run root. */
export class OpenRunFolderCommand implements Command {
  static readonly id = 'empo2.openRunFolder';
  readonly id = OpenRunFolderCommand.id;

  constructor(
    private readonly settings: Settings,
    private readonly hostLog: HostLog,
  ) {}

  async execute(): Promise<void> {
    const picked = await vscode.window.showOpenDialog({
      title: 'EMPO²: Open Run Folder',
      openLabel: 'Open Run',
      canSelectFiles: false,
      canSelectFolders: true,
      canSelectMany: false,
      defaultUri: await this.existingRunRoot(),
    });
    const folder = picked?.[0];
    if (!folder) {
      return;
    }
    this.hostLog.info(`Run folder picked: ${folder.fsPath}`);
    await showHostRequired('Reading a run folder');
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
