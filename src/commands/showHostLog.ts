import { HostLog } from '../host/hostLog';
import { Command } from './command';

export class ShowHostLogCommand implements Command {
  static readonly id = 'empo2.showHostLog';
  readonly id = ShowHostLogCommand.id;

  constructor(private readonly hostLog: HostLog) {}

  execute(): void {
    this.hostLog.show();
  }
}
