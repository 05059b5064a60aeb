import type * as vscode from 'vscode';
import type { Settings } from '../common/settings';

const EXTRA_ROOTS_KEY = 'empo2.extraRunRoots';

/**
 * The folders a spawned host may read runs from: the configured run root, then the folders
 * added by Open Run Folder (outside that root), remembered per workspace.
 */
export class RunRoots {
  constructor(
    private readonly settings: Settings,
    /** Where run folders go when no workspace folder is open. */
    private readonly fallbackRunRoot: string,
    private readonly workspaceState: vscode.Memento,
  ) {}

  /** The configured root (absolute), then any added ones. */
  list(): string[] {
    const configured = this.settings.runRoot?.fsPath ?? this.fallbackRunRoot;
    const extra = this.workspaceState.get<string[]>(EXTRA_ROOTS_KEY, []);
    return [...new Set([configured, ...extra])];
  }

  /** Lets the next local host read runs in `folder` too. */
  async add(folder: string): Promise<void> {
    const extra = this.workspaceState.get<string[]>(EXTRA_ROOTS_KEY, []);
    if (!extra.includes(folder)) {
      await this.workspaceState.update(EXTRA_ROOTS_KEY, [...extra, folder]);
    }
  }
}
