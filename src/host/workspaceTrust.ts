// Starting a host runs the workspace's Python interpreter and code, so it needs Workspace
// Trust. This guard is the one place that says so; it takes its VS Code parts as arguments so
// unit tests can hand it fakes.

export interface TrustedWorkspace {
  readonly isTrusted: boolean;
}

export interface WarningPrompter {
  showWarningMessage(message: string, ...items: string[]): Thenable<string | undefined>;
}

export interface CommandRunner {
  executeCommand(command: string, ...rest: unknown[]): Thenable<unknown>;
}

export const MANAGE_TRUST = 'Manage Workspace Trust';
export const CONNECT_REMOTE = 'Connect to Remote Host';

export class WorkspaceTrustGuard {
  constructor(
    private readonly workspace: TrustedWorkspace,
    private readonly window: WarningPrompter,
    private readonly commands: CommandRunner,
    /** The id of "Connect to Remote Host" (ConnectRemoteCommand.id, which is VS Code-bound). */
    private readonly connectRemoteCommand: string,
  ) {}

  /**
   * True when `action` may run. In Restricted Mode: explains why not and offers the two ways
   * forward (trust this folder, or use a host running elsewhere), then returns false.
   */
  async ensureTrusted(action: string): Promise<boolean> {
    if (this.workspace.isTrusted) {
      return true;
    }
    const choice = await this.window.showWarningMessage(
      `EMPO²: ${action} runs this workspace's Python code, so it needs a trusted workspace. ` +
        `Trust this folder with "${MANAGE_TRUST}", or connect to a host running elsewhere.`,
      MANAGE_TRUST,
      CONNECT_REMOTE,
    );
    if (choice === MANAGE_TRUST) {
      await this.commands.executeCommand('workbench.trust.manage');
    } else if (choice === CONNECT_REMOTE) {
      await this.commands.executeCommand(this.connectRemoteCommand);
    }
    return false;
  }
}
