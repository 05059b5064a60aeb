import { Command } from '../common/command';
import { HostLog } from './hostLog';

export class ShowHostLogCommand implements Command {
  static readonly id = 'empo2.showHostLog';
  readonly id = ShowHostLogCommand.id;

  constructor(private readonly hostLog: HostLog) {}

  execute(): void {
    this.hostLog.show();
  }
}
