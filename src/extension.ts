import * as vscode from 'vscode';
import * as path from 'node:path';
import { registerCommands } from './common/command';
import { folderStateFile } from './common/folderState';
import { Settings } from './common/settings';
import { ConnectionNotices } from './host/connectionNotices';
import {
  ConnectRemoteCommand,
  ReconnectCommand,
  RestartHostCommand,
  StartHostCommand,
  StopHostCommand,
  type HostServices,
} from './host/hostCommands';
import { HostLog } from './host/hostLog';
import { HostManager } from './host/hostManager';
import { RunRoots } from './host/runRoots';
import { HostStateModel } from './host/hostState';
import { ShowHostLogCommand } from './host/showHostLog';
import { WorkspaceTrustGuard } from './host/workspaceTrust';
import { HostStatusBar } from './hostStatusBar';
import { RefreshCommand } from './refresh';
import { ComparisonPanel } from './rerun/comparisonPanel';
import {
  AdoptBranchCommand,
  CompareWithParentCommand,
  DeleteBranchCommand,
  RerunUpdateCommand,
  type RerunServices,
} from './rerun/rerunCommands';
import { RerunJobs } from './rerun/rerunJobs';
import { branchRuns, HAS_BRANCH_CONTEXT } from './rerun/branches';
import { describeError } from './rpc/errors';
import { Notifications } from './rpc/methods';
import type { RunInfo } from './rpc/protocol';
import { autoStartRequest, autoStartStep } from './runs/autoStartPlan';
import { autoStartedRecordFile, readAutoStartedRecord, writeAutoStartedRecord } from './runs/autoStartRecord';
import { MetricsPanel } from './runs/metricsPanel';
import { OpenRunFolderCommand } from './runs/openRunFolder';
import {
  OpenInTensorBoardCommand,
  OpenRootInTensorBoardCommand,
  tensorBoardServers,
  type TensorBoardServices,
} from './tensorboard/openInTensorBoard';
import {
  CompareMetricsCommand,
  NewRunCommand,
  PauseRunCommand,
  ResumeRunCommand,
  resumeRun,
  ShowMetricsCommand,
  StartSavedRunCommand,
  StopRunCommand,
  type NewRunArg,
  type RunServices,
} from './runs/runCommands';
import { RunProgressReporter } from './runs/runProgress';
import { runContext } from './runs/runContext';
import { RunsModel } from './runs/runsModel';
import { RunGuard } from './runGuard/runGuard';
import {
  AddTipCommand,
  DeleteTipCommand,
  EditTipCommand,
  ShowTipHistoryCommand,
  type TipServices,
} from './tips/tipCommands';
import { TipHistoryDocuments } from './tips/tipHistoryDocuments';
import { TipsModel } from './tips/tipsModel';
import { PersonName } from './tips/personName';
import { TipsViewProvider } from './tips/tipsViewProvider';
import { ScoreEpisodeLocallyCommand } from './scoring/scoreEpisodeLocally';
import { EpisodeBrowser } from './trajectories/episodeBrowser';
import { EpisodePanel } from './trajectories/episodePanel';
import { OpenEpisodeCommand } from './trajectories/openEpisode';
import { DebugEpisodeCommand, DebugFeature, ShowTokensCommand } from './debug/debugFeature';
import { ShowTipCommand } from './debug/showTipCommand';
import { TrajectoryModel } from './trajectories/trajectoryModel';
import { TrajectoryTreeProvider } from './trajectories/trajectoryTreeProvider';

// Services are built here, once each, in dependency order, and handed to whoever needs them.

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

export function activate(context: vscode.ExtensionContext): Empo2Api {
  const version = (context.extension.packageJSON as { version: string }).version;
  const settings = new Settings();
  const hostLog = new HostLog();
  const hostState = new HostStateModel();
  const trust = new WorkspaceTrustGuard(vscode.workspace, vscode.window, vscode.commands, ConnectRemoteCommand.id);
  // The window's workspace folder ('' when none is open): what it remembers is kept per folder.
  const folder = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath ?? '';
  const globalStorage = context.globalStorageUri.fsPath;
  const host = new HostManager(hostState, hostLog, settings, {
    extensionVersion: version,
    projectRoot: context.extensionUri.fsPath,
    secrets: context.secrets,
    runRoots: new RunRoots(
      settings,
      path.join(globalStorage, 'runs'),
      folderStateFile(globalStorage, 'run-roots', folder),
      context.workspaceState,
    ),
  });
  hostToStop = host;
  const runs = new RunsModel(host);
  const person = new PersonName(vscode.authentication);
  context.subscriptions.push(person);
  const tips = new TipsModel(host, runs, () => person.current());
  const trajectoryModel = new TrajectoryModel(host, runs);
  const trajectories = new TrajectoryTreeProvider(trajectoryModel);
  const debug = new DebugFeature(host, runs);
  // Several runs selected at once are compared in one metrics panel (Compare Runs' Metrics).
  const treeView = vscode.window.createTreeView(TrajectoryTreeProvider.viewId, {
    treeDataProvider: trajectories,
    showCollapseAll: true,
    canSelectMany: true,
  });
  const episodePanel = new EpisodePanel(context.extensionUri, (tipId) => tipsView.reveal(tipId));
  const episodes = new EpisodeBrowser(trajectoryModel, runs, treeView, episodePanel, hostLog);
  const tipsView: TipsViewProvider = new TipsViewProvider(
    context.extensionUri,
    hostState,
    host.health,
    tips,
    runs,
    (runId, episodeId) => episodes.open(runId, episodeId),
  );
  const metrics = new MetricsPanel(context.extensionUri, host, runs);
  const refresh = new RefreshCommand({ trajectories, runs, tips });
  const runGuard = new RunGuard(host, runs);
  const comparison = new ComparisonPanel(context.extensionUri);
  const rerunJobs = new RerunJobs(host, runs);
  const hostServices: HostServices = { trust, host, hostLog, settings, beforeStop: runGuard.beforeStop };
  const runServices: RunServices = { settings, hostLog, trust, host, runs, metrics };
  const tensorBoards = tensorBoardServers(settings, hostLog, context.extensionUri.fsPath);
  const tensorBoardServices: TensorBoardServices = {
    settings,
    hostLog,
    host,
    runs,
    projectRoot: context.extensionUri.fsPath,
    servers: tensorBoards,
  };
  const tipHistories = new TipHistoryDocuments();
  const tipServices: TipServices = { host, tips, runs, histories: tipHistories };
  const rerunServices: RerunServices = { host, runs, jobs: rerunJobs, panel: comparison };

  context.subscriptions.push(
    hostLog,
    hostState,
    host,
    runs,
    tips,
    trajectoryModel,
    trajectories,
    debug,
    treeView,
    episodePanel,
    episodes,
    tipsView,
    metrics,
    runGuard,
    comparison,
    rerunJobs,
    tipHistories,
    tensorBoards,
    new HostStatusBar(host, runs),
    new ConnectionNotices(host.health, host.reconnector, hostLog, host.onDidFail, host.state),
    new RunProgressReporter(runs, (runId) => vscode.commands.executeCommand(StopRunCommand.id, runId)),
    vscode.window.registerWebviewViewProvider(TipsViewProvider.viewType, tipsView, {
      webviewOptions: { retainContextWhenHidden: true },
    }),
    host.on(Notifications.hostResync, ({ reason, dropped }) => {
      hostLog.warn(`The host dropped ${dropped} notification(s) for this window (${reason}); reloading.`);
      void refresh.execute();
    }),
    host.state.onDidChange((state) => void vscode.commands.executeCommand('setContext', 'empo2.hostState', state)),
    // "Reconnect to Host" applies while the link is down (reconnecting, or lost after the retries).
    host.health.onDidChange(
      (health) => void vscode.commands.executeCommand('setContext', 'empo2.connection', health.kind),
    ),
    runs.onDidChangeCurrent(() => setRunContext(runs)),
    runs.onDidChangeRun(() => setRunContext(runs)),
    runs.onDidChangeRuns(() => setRunContext(runs)),
    registerCommands([
      ...[StartHostCommand, StopHostCommand, RestartHostCommand, ConnectRemoteCommand, ReconnectCommand].map(
        (Host) => new Host(hostServices),
      ),
      ...[
        NewRunCommand,
        StartSavedRunCommand,
        PauseRunCommand,
        ResumeRunCommand,
        StopRunCommand,
        OpenRunFolderCommand,
        ShowMetricsCommand,
        CompareMetricsCommand,
      ].map((Run) => new Run(runServices)),
      ...[OpenInTensorBoardCommand, OpenRootInTensorBoardCommand].map(
        (TensorBoard) => new TensorBoard(tensorBoardServices),
      ),
      refresh,
      ...[AddTipCommand, EditTipCommand, DeleteTipCommand, ShowTipHistoryCommand].map(
        (TipCommand) => new TipCommand(tipServices),
      ),
      new ShowHostLogCommand({ hostLog }),
      new OpenEpisodeCommand({ episodes }),
      new DebugEpisodeCommand({ runs, trajectories: trajectoryModel }),
      new ShowTokensCommand({ feature: debug }),
      new ScoreEpisodeLocallyCommand({ settings, tokens: debug.tokens }),
      new ShowTipCommand({ feature: debug, runs, reveal: (tipId) => tipsView.reveal(tipId) }),
      ...[RerunUpdateCommand, CompareWithParentCommand, AdoptBranchCommand, DeleteBranchCommand].map(
        (Rerun) => new Rerun(rerunServices),
      ),
    ]),
  );
  void vscode.commands.executeCommand('setContext', 'empo2.hostState', host.state.state);
  void vscode.commands.executeCommand('setContext', 'empo2.connection', host.health.health.kind);
  setRunContext(runs);

  hostLog.info(`EMPO² Studio ${version} is active. The training host is not running.`);
  if (settings.autoStart && vscode.workspace.isTrusted) {
    void autoStart(host, runs, settings, folder, autoStartedRecordFile(globalStorage, folder), hostLog);
  }
  return { host, runs, trajectories, tips, episodes, metrics, debug, comparison };
}

const runContextNow = new Map<string, string | boolean>();

/** The context keys of package.json's `when` clauses (runContext.ts, rerun/branches.ts), set only
 *  when they change. */
function setRunContext(runs: RunsModel): void {
  const keys = { ...runContext(runs.live, runs.current), [HAS_BRANCH_CONTEXT]: branchRuns(runs.list()).length > 0 };
  for (const [key, value] of Object.entries(keys)) {
    if (runContextNow.get(key) !== value) {
      runContextNow.set(key, value);
      void vscode.commands.executeCommand('setContext', key, value);
    }
  }
}

/** empo2.autoStart: the host, then (empo2.autoStartRun) a training run, shown live. The EMPO²
 * views open first, so the window shows what it is doing (the host starting) from the start. A
 * window opened again goes on with the run it started (autoStartPlan.ts). */
async function autoStart(
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

/** Stops a spawned host before the extension host goes away: no orphan trainer. */
export async function deactivate(): Promise<void> {
  await hostToStop?.stopForExit();
  hostToStop = undefined;
}
