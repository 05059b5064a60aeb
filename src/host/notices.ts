import * as vscode from 'vscode';
import { describeError } from '../rpc/errors';
import type { HostManager } from './hostManager';
import type { WorkspaceTrustGuard } from './workspaceTrust';

// What commands share: getting a host when they need one, and saying what went wrong in one
// sentence.

const START_HOST = 'Start Host';

/** The command works on a running host, and none is running: say so, offer to start one. */
export async function showHostRequired(what: string): Promise<void> {
  const choice = await vscode.window.showInformationMessage(
    `EMPO²: start the host first. ${what} needs a running training host.`,
    START_HOST,
  );
  if (choice === START_HOST) {
    await vscode.commands.executeCommand('empo2.startHost');
  }
}

/** A connected host, starting a local one first (after the trust check) when none is connected. */
export async function ensureHost(host: HostManager, trust: WorkspaceTrustGuard, what: string): Promise<boolean> {
  if (host.current) {
    return true;
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
