import * as vscode from 'vscode';
import type { HostApi } from '../host/hostApi';
import { describeError } from '../rpc/errors';
import { Requests } from '../rpc/methods';
import type { RunEntry, RunsModel } from './runsModel';

// Pausing or stopping the training run to make room for something (Restart Host in
// src/runGuard/, a rerun in src/rerun/), then waiting for its iteration boundary in a
// cancellable progress notification.

/** run.pause, then waits (cancellable) until the run is paused at its iteration boundary (or
 *  trains no more); false when that failed or the person cancelled the wait. */
export function pauseAndWait(host: HostApi, runs: RunsModel, runId: string): Promise<boolean> {
  return requestAndWait(host, runs, runId, 'pause', (entry) => entry.info.state === 'paused');
}

/** run.stop, then waits (cancellable) until the run has stopped at its iteration boundary. */
export function stopAndWait(host: HostApi, runs: RunsModel, runId: string): Promise<boolean> {
  return requestAndWait(host, runs, runId, 'stop', () => false);
}

async function requestAndWait(
  host: HostApi,
  runs: RunsModel,
  runId: string,
  verb: 'pause' | 'stop',
  reached: (entry: RunEntry) => boolean,
): Promise<boolean> {
  try {
    await host.request(verb === 'pause' ? Requests.runPause : Requests.runStop, { runId });
  } catch (error) {
    void vscode.window.showErrorMessage(`EMPO²: cannot ${verb} ${runId}: ${describeError(error)}`);
    return false;
  }
  const title =
    verb === 'pause'
      ? `EMPO²: waiting for ${runId} to finish its iteration`
      : `EMPO²: waiting for ${runId} to stop at its iteration boundary`;
  return vscode.window.withProgress(
    { location: vscode.ProgressLocation.Notification, title, cancellable: true },
    (_progress, token) =>
      new Promise<boolean>((resolve) => {
        const check = (): void => {
          const entry = runs.get(runId);
          if (!entry || !entry.info.live || reached(entry)) {
            done(true);
          }
        };
        const subscription = runs.onDidChangeRun(check);
        const cancelled = token.onCancellationRequested(() => done(false));
        function done(value: boolean): void {
          subscription.dispose();
          cancelled.dispose();
          resolve(value);
        }
        check();
      }),
  );
}
