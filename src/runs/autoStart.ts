import * as path from 'node:path';
import * as vscode from 'vscode';
import type { HostLog } from '../host/hostLog';
import type { HostManager } from '../host/hostManager';
import { describeError } from '../rpc/errors';
import type { RunInfo } from '../rpc/protocol';
import type { Settings } from '../common/settings';
import { autoStartRequest, autoStartStep } from './autoStartPlan';
import { readAutoStartedRecord, writeAutoStartedRecord } from './autoStartRecord';
import { ShowMetricsCommand } from './metricsCommands';
import { NewRunCommand, resumeRun, type NewRunArg } from './runCommands';
import type { RunsModel } from './runsModel';

/** empo2.autoStart: the host, then (empo2.autoStartRun) a training run, shown live. The EMPO²
 * views open first, so the window shows what it is doing (the host starting) from the start. A
 * window opened again goes on with the run it started (autoStartPlan.ts). */
export async function autoStart(
  host: HostManager,
  runs: RunsModel,
  settings: Settings,
  folder: string,
  recordFile: string,
  log: HostLog,
): Promise<void> {
  if (settings.autoStartRun) {
    await vscode.commands.executeCommand('workbench.view.extension.empo2');
  }
  if (!(await host.start()) || !settings.autoStartRun) {
    return;
  }
  await runs.reload();
  const what = settings.autoStartRun;
  const request = autoStartRequest(what, settings.autoStartLaunch);
  const step = autoStartStep(
    request,
    readAutoStartedRecord(recordFile),
    runs.list().map((entry) => entry.info),
  );
  log.info(
    step.kind === 'start'
      ? `Auto-start: a new ${what} run.`
      : `Auto-start: ${step.kind === 'show' ? 'showing' : 'resuming'} run ${step.runId}, started for this launch.`,
  );
  let run: RunInfo | undefined;
  if (step.kind === 'show') {
    runs.select(step.runId);
    await vscode.commands.executeCommand(ShowMetricsCommand.id, step.runId);
    return;
  } else if (step.kind === 'resume') {
    try {
      run = await resumeRun(host, runs, step.runId);
    } catch (error) {
      void vscode.window.showErrorMessage(`EMPO²: cannot resume ${step.runId}: ${describeError(error)}`);
      return;
    }
  } else {
    const arg: NewRunArg = /\.json$|[/\\]/.test(what) ? { configFile: path.resolve(folder, what) } : { preset: what };
    run = await vscode.commands.executeCommand<RunInfo | undefined>(NewRunCommand.id, arg);
  }
  if (run) {
    try {
      writeAutoStartedRecord(recordFile, { request, runId: run.runId });
    } catch (error) {
      log.warn(
        `Auto-start: cannot record run ${run.runId} (${describeError(error)}); a window opened again starts another.`,
      );
    }
    await vscode.commands.executeCommand(ShowMetricsCommand.id, run.runId);
  }
}
