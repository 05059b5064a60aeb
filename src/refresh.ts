import type * as vscode from 'vscode';
import { CommandBase, registerCommands } from './common/command';
import type { HostFeature } from './host/activate';
import { Notifications } from './rpc/methods';
import type { RunsFeature } from './runs/activate';
import type { TipsFeature } from './tips/activate';
import type { TrajectoriesFeature } from './trajectories/activate';
import type { RunsModel } from './runs/runsModel';
import type { TipsModel } from './tips/tipsModel';
import type { TrajectoryTreeProvider } from './trajectories/trajectoryTreeProvider';

/** Reads runs, trajectories and tips again from the host (after a resync, or to be sure). */
export class RefreshCommand extends CommandBase<{
  trajectories: TrajectoryTreeProvider;
  runs: RunsModel;
  tips: TipsModel;
}> {
  static readonly id = 'empo2.refresh';

  async execute(): Promise<void> {
    const { trajectories, runs, tips } = this.services;
    trajectories.refresh();
    await runs.reload();
    await tips.load(runs.current?.info.runId);
  }
}

/** Refresh, also run when the host dropped notifications for this window (host/resync). */
export function activateRefresh(
  context: vscode.ExtensionContext,
  { host, hostLog, runs, tips, trajectories }: HostFeature & RunsFeature & TipsFeature & TrajectoriesFeature,
): void {
  const refresh = new RefreshCommand({ trajectories, runs, tips });
  context.subscriptions.push(
    host.on(Notifications.hostResync, ({ reason, dropped }) => {
      hostLog.warn(`The host dropped ${dropped} notification(s) for this window (${reason}); reloading.`);
      void refresh.execute();
    }),
    registerCommands([refresh]),
  );
}
