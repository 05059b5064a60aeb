import * as vscode from 'vscode';
import { describeError } from '../rpc/errors';
import { ReconnectCommand, StartHostCommand } from './hostCommands';
import type { HostManager } from './hostManager';
import type { WorkspaceTrustGuard } from './workspaceTrust';

// What commands share: getting a host when they need one, and saying what went wrong in one
// sentence.

const START_HOST = 'Start Host';
const RECONNECT_NOW = 'Reconnect Now';

/**
 * The command works on a running host, and none is connected: say so, and offer what helps.
 * While the link is being restored that is waiting (or Reconnect Now), never "start the host":
 * the host is there, and for a remote one a local host would be the wrong thing.
 */
export async function showHostRequired(what: string, host: HostManager): Promise<void> {
  if (host.health.isInterrupted) {
    const choice = await vscode.window.showInformationMessage(
      `EMPO²: the connection to the training host is being restored. ${what} works again once it is back.`,
      RECONNECT_NOW,
    );
    if (choice === RECONNECT_NOW) {
      await vscode.commands.executeCommand(ReconnectCommand.id);
    }
    return;
  }
  const choice = await vscode.window.showInformationMessage(
    `EMPO²: start the host first. ${what} needs a running training host.`,
    START_HOST,
  );
  if (choice === START_HOST) {
    await vscode.commands.executeCommand(StartHostCommand.id);
  }
}

/** A connected host, starting a local one first (after the trust check) when none is connected. */
export async function ensureHost(host: HostManager, trust: WorkspaceTrustGuard, what: string): Promise<boolean> {
  if (host.current) {
    return true;
  }
  if (host.health.isInterrupted) {
    await showHostRequired(what, host); // reconnecting: no new local host next to the one we lost
    return false;
  }
  if (!(await trust.ensureTrusted(what))) {
    return false;
  }
  return host.start();
}

/** Reports a failed action in one sentence (the details are in the host log). */
export async function showFailure(what: string, error: unknown): Promise<void> {
  await vscode.window.showErrorMessage(`EMPO²: ${what} failed: ${describeError(error)}`);
}
