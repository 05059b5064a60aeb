import type * as vscode from 'vscode';
import type { HostFeature } from '../host/activate';
import type { BeforeHostStop } from '../host/hostCommands';
import type { RunsFeature } from '../runs/activate';
import { RunGuard } from './runGuard';

/** The run guard: what Stop Host and Restart Host ask while a run trains. */
export function activateRunGuard(
  context: vscode.ExtensionContext,
  { host, runs }: HostFeature & RunsFeature,
): BeforeHostStop {
  const runGuard = new RunGuard(host, runs);
  context.subscriptions.push(runGuard);
  return runGuard.beforeStop;
}
