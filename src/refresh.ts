import { CommandBase } from './common/command';
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
