import { CommandBase } from '../common/command';
import type { HostLog } from './hostLog';

export class ShowHostLogCommand extends CommandBase<{ hostLog: HostLog }> {
  static readonly id = 'empo2.showHostLog';

  execute(): void {
    this.services.hostLog.show();
  }
}
