import { TrajectoryTreeProvider } from '../views/trajectories/trajectoryTreeProvider';
import { Command } from './command';

export class RefreshCommand implements Command {
  static readonly id = 'empo2.refresh';
  readonly id = RefreshCommand.id;

  constructor(private readonly trajectories: TrajectoryTreeProvider) {}

  execute(): void {
    this.trajectories.refresh();
  }
}
