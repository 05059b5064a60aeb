import * as vscode from 'vscode';
import type { DebugFeature } from './debug/debugFeature';
import { activateDebug } from './debug/activate';
import { activateHost, activateHostCommands } from './host/activate';
import type { HostManager } from './host/hostManager';
import { HostStatusBar } from './hostStatusBar';
import { activateRefresh } from './refresh';
import { activateRerun } from './rerun/activate';
import type { ComparisonPanel } from './rerun/comparisonPanel';
import { activateRunGuard } from './runGuard/activate';
import { activateRuns } from './runs/activate';
import { autoStart } from './runs/autoStart';
import { autoStartedRecordFile } from './runs/autoStartRecord';
import type { MetricsPanel } from './runs/metricsPanel';
import type { RunsModel } from './runs/runsModel';
import { activateScoring } from './scoring/activate';
import { activateTensorBoard } from './tensorboard/activate';
import { activateTips } from './tips/activate';
import type { TipsModel } from './tips/tipsModel';
import { activateTrajectories } from './trajectories/activate';
import type { EpisodeBrowser } from './trajectories/episodeBrowser';
import type { TrajectoryTreeProvider } from './trajectories/trajectoryTreeProvider';

/** What the extension returns from activate(): its services, for the integration tests. */
export interface Empo2Api {
  readonly debug: DebugFeature;
  readonly host: HostManager;
  readonly runs: RunsModel;
  readonly trajectories: TrajectoryTreeProvider;
  readonly tips: TipsModel;
  readonly episodes: EpisodeBrowser;
  readonly metrics: MetricsPanel;
  readonly comparison: ComparisonPanel;
}

let hostToStop: HostManager | undefined;

/**
 * One feature after another, each wiring itself in its own folder (`<feature>/activate.ts`) from
 * what the ones before it hand on. The Memory Tips come before the Trajectories, which open the
 * episode a tip links to when the tips view asks; Stop Host asks the run guard, so the host's
 * commands come after the runs.
 */
export function activate(context: vscode.ExtensionContext): Empo2Api {
  const host = activateHost(context);
  hostToStop = host.host;
  const runs = activateRuns(context, host);
  activateHostCommands(context, host, activateRunGuard(context, { ...host, ...runs }));
  const tips = activateTips(context, { ...host, ...runs });
  const trajectories = activateTrajectories(context, { ...host, ...runs, ...tips });
  activateRefresh(context, { ...host, ...runs, ...tips, ...trajectories });
  const debug = activateDebug(context, { ...host, ...runs, ...trajectories, revealTip: tips.revealTip });
  activateScoring(context, host, debug.tokens);
  const comparison = activateRerun(context, { ...host, ...runs });
  activateTensorBoard(context, { ...host, ...runs });
  context.subscriptions.push(new HostStatusBar(host.host, runs.runs));

  const { settings, hostLog, folder, globalStorage, version } = host;
  hostLog.info(`EMPO² Studio ${version} is active. The training host is not running.`);
  if (settings.autoStart && vscode.workspace.isTrusted) {
    const recordFile = autoStartedRecordFile(globalStorage, folder);
    void autoStart(host.host, runs.runs, settings, folder, recordFile, hostLog);
  }
  return {
    host: host.host,
    runs: runs.runs,
    trajectories: trajectories.trajectories,
    tips: tips.tips,
    episodes: trajectories.episodes,
    metrics: runs.metrics,
    debug,
    comparison,
  };
}

/** Stops a spawned host before the extension host goes away: no orphan trainer. */
export async function deactivate(): Promise<void> {
  await hostToStop?.stopForExit();
  hostToStop = undefined;
}
