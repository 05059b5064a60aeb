import * as vscode from 'vscode';
import { HostLog } from '../host/hostLog';

// What commands say while the piece they need is not there. Until the host launcher and the
// protocol client land, every host-backed command ends in one of these two messages.

const START_HOST = 'Start Host';
const SHOW_LOG = 'Show Host Log';

/** The command works on a running host, and none is running. */
export async function showHostRequired(what: string): Promise<void> {
  const choice = await vscode.window.showInformationMessage(
    `EMPO²: start the host first. ${what} needs a running training host.`,
    START_HOST,
  );
  if (choice === START_HOST) {
    await vscode.commands.executeCommand('empo2.startHost');
  }
}

/** The feature itself is not in this build yet; say so plainly and leave a note in the log. */
export async function showNotInThisBuild(what: string, hostLog: HostLog): Promise<void> {
  hostLog.info(`${what} was requested; this preview build does not include it yet.`);
  const choice = await vscode.window.showInformationMessage(
    `EMPO²: ${what} is not available in this preview build yet.`,
    SHOW_LOG,
  );
  if (choice === SHOW_LOG) {
    hostLog.show();
  }
}
