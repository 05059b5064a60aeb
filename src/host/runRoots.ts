import type * as vscode from 'vscode';
import { readFolderState, writeFolderState } from '../common/folderState';
import type { Settings } from '../common/settings';

/** Where earlier versions kept the added folders (workspace state: per browser in code-server). */
const LEGACY_KEY = 'empo2.extraRunRoots';

/**
 * The folders a spawned host may read runs from: the configured run root, then the folders
 * added by Open Run Folder (outside that root), remembered for the workspace folder in a file on
 * the extension host's machine (folderState.ts), so every browser and window on it reads them.
 */
export class RunRoots {
  constructor(
    private readonly settings: Settings,
    /** Where run folders go when no workspace folder is open. */
    private readonly fallbackRunRoot: string,
    /** The workspace folder's file of added roots (folderStateFile(…, 'run-roots', …)). */
    private readonly addedFile: string,
    /** Read only, for the folders an earlier version added in this browser. */
    private readonly legacyState: vscode.Memento,
  ) {}

  /** The configured root (absolute), then any added ones. */
  list(): string[] {
    const configured = this.settings.runRoot?.fsPath ?? this.fallbackRunRoot;
    return [...new Set([configured, ...this.added(), ...strings(this.legacyState.get(LEGACY_KEY))])];
  }

  /** Lets the next local host read runs in `folder` too. */
  add(folder: string): void {
    const added = this.added();
    if (!added.includes(folder)) {
      writeFolderState(this.addedFile, [...added, folder]);
    }
  }

  private added(): string[] {
    return strings(readFolderState(this.addedFile));
  }
}

/** The strings of a stored list; a damaged value counts as none. */
function strings(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((item): item is string => typeof item === 'string') : [];
}
