import { WorkspaceTrustGuard } from '../host/workspaceTrust';
import { Command } from './command';
import { showHostRequired } from './notices';

// Commands on training runs. All of them talk to the host through run.* requests, which the
// protocol client will carry; until then they ask for a running host.

export class NewRunCommand implements Command {
  static readonly id = 'empo2.newRun';
  readonly id = NewRunCommand.id;

  constructor(private readonly trust: WorkspaceTrustGuard) {}

  async execute(): Promise<void> {
    // A run starts a host when none is running, so it needs trust like Start Host does.
    if (await this.trust.ensureTrusted('Starting a training run')) {
      await showHostRequired('A new training run');
    }
  }
}

export class PauseRunCommand implements Command {
  static readonly id = 'empo2.pauseRun';
  readonly id = PauseRunCommand.id;

  async execute(): Promise<void> {
    await showHostRequired('Pausing a run');
  }
}

export class ResumeRunCommand implements Command {
  static readonly id = 'empo2.resumeRun';
  readonly id = ResumeRunCommand.id;

  async execute(): Promise<void> {
    await showHostRequired('Resuming a run');
  }
}

export class StopRunCommand implements Command {
  static readonly id = 'empo2.stopRun';
  readonly id = StopRunCommand.id;

  async execute(): Promise<void> {
    await showHostRequired('Stopping a run');
  }
}

export class ShowMetricsCommand implements Command {
  static readonly id = 'empo2.showMetrics';
  readonly id = ShowMetricsCommand.id;

  async execute(): Promise<void> {
    await showHostRequired('The metrics view');
  }
}
