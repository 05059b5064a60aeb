import * as vscode from 'vscode';
import { registerCommands } from '../common/command';
import { contextKeys } from '../common/contextKeys';
import type { HostFeature } from '../host/activate';
import { MetricsPanel } from './metricsPanel';
import { OpenRunFolderCommand } from './openRunFolder';
import { CompareMetricsCommand, ShowMetricsCommand } from './metricsCommands';
import { NewRunCommand, PauseRunCommand, ResumeRunCommand, StartSavedRunCommand, StopRunCommand } from './runCommands';
import { runContext } from './runContext';
import { RunProgressReporter } from './runProgress';
import { RunsModel } from './runsModel';

/** The runs and what later features take from them. */
export interface RunsFeature {
  readonly runs: RunsModel;
  readonly metrics: MetricsPanel;
}

/** The runs model, the metrics panel, the run commands, the progress notification of a run
 *  started here, and the run context keys of package.json's `when` clauses (runContext.ts). */
export function activateRuns(context: vscode.ExtensionContext, shared: HostFeature): RunsFeature {
  const { settings, hostLog, trust, host } = shared;
  const runs = new RunsModel(host);
  const metrics = new MetricsPanel(context.extensionUri, host, runs);
  const services = { settings, hostLog, trust, host, runs, metrics };
  const setRunContext = contextKeys(() => runContext(runs.live, runs.current));
  context.subscriptions.push(
    runs,
    metrics,
    new RunProgressReporter(runs, (runId) => vscode.commands.executeCommand(StopRunCommand.id, runId)),
    runs.onDidChangeCurrent(setRunContext),
    runs.onDidChangeRun(setRunContext),
    runs.onDidChangeRuns(setRunContext),
    registerCommands(
      [
        NewRunCommand,
        StartSavedRunCommand,
        PauseRunCommand,
        ResumeRunCommand,
        StopRunCommand,
        OpenRunFolderCommand,
        ShowMetricsCommand,
        CompareMetricsCommand,
      ].map((Run) => new Run(services)),
    ),
  );
  setRunContext();
  return { runs, metrics };
}
