import { folderStateFile, readFolderState, writeFolderState } from '../common/folderState';
import { readAutoStarted, type AutoStarted } from './autoStartPlan';

// Where empo2.autoStartRun remembers the run it started: one file per workspace folder on the
// extension host's machine (folderState.ts), so any browser and any window on the folder reads it.

/** The record's file for one workspace folder ('' when none is open). */
export function autoStartedRecordFile(globalStorage: string, workspaceFolder: string): string {
  return folderStateFile(globalStorage, 'auto-started', workspaceFolder);
}

/** The run recorded in `file`, if a readable record is there (none yet, or damaged: none). */
export function readAutoStartedRecord(file: string): AutoStarted | undefined {
  return readAutoStarted(readFolderState(file));
}

/** Records the run, replacing the file whole. */
export function writeAutoStartedRecord(file: string, started: AutoStarted): void {
  writeFolderState(file, { request: started.request, runId: started.runId });
}
