import { Command } from './command';
import { showHostRequired } from './notices';

// Commands on memory tips. They become memory.* requests (update with the expected version,
// conflicts shown side by side) once the protocol client exists.

export class AddTipCommand implements Command {
  static readonly id = 'empo2.addTip';
  readonly id = AddTipCommand.id;

  async execute(): Promise<void> {
    await showHostRequired('Adding a tip');
  }
}

export class EditTipCommand implements Command {
  static readonly id = 'empo2.editTip';
  readonly id = EditTipCommand.id;

  async execute(): Promise<void> {
    await showHostRequired('Editing a tip');
  }
}

export class DeleteTipCommand implements Command {
  static readonly id = 'empo2.deleteTip';
  readonly id = DeleteTipCommand.id;

  async execute(): Promise<void> {
    await showHostRequired('Deleting a tip');
  }
}

export class ShowTipHistoryCommand implements Command {
  static readonly id = 'empo2.showTipHistory';
  readonly id = ShowTipHistoryCommand.id;

  async execute(): Promise<void> {
    await showHostRequired('A tip\'s history');
  }
}
