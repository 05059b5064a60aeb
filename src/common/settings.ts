import * as vscode from 'vscode';
import * as path from 'node:path';

// Typed access to the empo2.* settings declared in package.json. Read on each use, so a changed
// setting applies without reloading the window.

export class Settings {
  private get section(): vscode.WorkspaceConfiguration {
    return vscode.workspace.getConfiguration('empo2');
  }

  /** Empty means: find the interpreter ourselves (.venv, then the Python extension's choice). */
  get pythonPath(): string {
    return this.section.get<string>('pythonPath', '').trim();
  }

  get hostArgs(): string[] {
    return this.section.get<string[]>('hostArgs', []);
  }

  get remoteUrl(): string {
    return this.section.get<string>('remoteUrl', '').trim();
  }

  /** Minutes of slow background reconnect attempts to a remote host after the fast ones (0: none). */
  get backgroundRetryMinutes(): number {
    const minutes = this.section.get<number>('remote.backgroundRetryMinutes', 30);
    return Number.isFinite(minutes) && minutes > 0 ? minutes : 0;
  }

  get autoStart(): boolean {
    return this.section.get<boolean>('autoStart', false);
  }

  /** A preset or config file to train once an auto-started host is up; empty for none. */
  get autoStartRun(): string {
    return this.section.get<string>('autoStartRun', '').trim();
  }

  /** Names one launch of autoStartRun (scripts/vscode-open.sh writes a new one each time). */
  get autoStartLaunch(): string {
    return this.section.get<string>('autoStartLaunch', '').trim();
  }

  /** The run root as an absolute folder: relative values hang off the first workspace folder. */
  get runRoot(): vscode.Uri | undefined {
    const runRoot = this.section.get<string>('runRoot', '.empo2/runs').trim() || '.empo2/runs';
    if (path.isAbsolute(runRoot)) {
      return vscode.Uri.file(runRoot);
    }
    const folder = vscode.workspace.workspaceFolders?.[0];
    return folder ? vscode.Uri.joinPath(folder.uri, runRoot) : undefined;
  }
}
