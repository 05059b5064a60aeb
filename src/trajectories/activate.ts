import * as vscode from 'vscode';
import { registerCommands } from '../common/command';
import type { Event } from '../common/event';
import type { HostFeature } from '../host/activate';
import type { RunsFeature } from '../runs/activate';
import { EpisodeBrowser } from './episodeBrowser';
import { EpisodePanel } from './episodePanel';
import { OpenEpisodeCommand } from './openEpisode';
import { TrajectoryModel } from './trajectoryModel';
import { TrajectoryTreeProvider } from './trajectoryTreeProvider';

/** What the Trajectories feature takes from the Memory Tips (tips/activate.ts's TipsFeature). */
export interface TipLinks {
  readonly revealTip: (tipId: string) => Promise<void>;
  readonly onDidAskToOpenEpisode: Event<{ readonly runId: string; readonly episodeId: string }>;
}

/** The trajectories and what later features take from them. */
export interface TrajectoriesFeature {
  readonly trajectoryModel: TrajectoryModel;
  readonly trajectories: TrajectoryTreeProvider;
  readonly episodes: EpisodeBrowser;
}

/** The Trajectories tree and the episode view, linked both ways to the Memory Tips. */
export function activateTrajectories(
  context: vscode.ExtensionContext,
  shared: HostFeature & RunsFeature & TipLinks,
): TrajectoriesFeature {
  const { host, hostLog, runs, revealTip, onDidAskToOpenEpisode } = shared;
  const trajectoryModel = new TrajectoryModel(host, runs);
  const trajectories = new TrajectoryTreeProvider(trajectoryModel);
  // Several runs selected at once are compared in one metrics panel (Compare Runs' Metrics).
  const treeView = vscode.window.createTreeView(TrajectoryTreeProvider.viewId, {
    treeDataProvider: trajectories,
    showCollapseAll: true,
    canSelectMany: true,
  });
  const episodePanel = new EpisodePanel(context.extensionUri, revealTip);
  const episodes = new EpisodeBrowser(trajectoryModel, runs, treeView, episodePanel, hostLog);
  context.subscriptions.push(
    trajectoryModel,
    trajectories,
    treeView,
    episodePanel,
    episodes,
    onDidAskToOpenEpisode(({ runId, episodeId }) => void episodes.open(runId, episodeId)),
    registerCommands([new OpenEpisodeCommand({ episodes })]),
  );
  return { trajectoryModel, trajectories, episodes };
}
