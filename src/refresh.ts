import type { Command } from './common/command';
import type { RunsModel } from './runs/runsModel';
import type { TipsModel } from './tips/tipsModel';
import type { TrajectoryTreeProvider } from './trajectories/trajectoryTreeProvider';

/** Reads runs, trajectories and tips again from the host (after a resync, or to be sure). */
export class RefreshCommand implements Command {
  static readonly id = 'empo2.refresh';
  readonly id = RefreshCommand.id;

  constructor(
    private readonly trajectories: TrajectoryTreeProvider,
    private readonly runs: RunsModel,
    private readonly tips: TipsModel,
  ) {}

  async execute(): Promise<void> {
    this.trajectories.refresh();
    await this.runs.reload();
    await this.tips.load(this.runs.current?.info.runId);
  }
}
