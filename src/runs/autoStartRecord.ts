import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { readAutoStarted, type AutoStarted } from './autoStartPlan';

// Where empo2.autoStartRun remembers the run it started: a file per workspace folder in the
// extension's global storage (ExtensionContext.globalStorageUri), on the machine the extension
// host runs on. Not workspaceState: in VS Code in a browser (code-server) that is kept in the
// browser's own storage, so the URL opened in another browser, a private window or a fresh
// profile would not know the run and would start one more. Not storageUri either: a second
// window open on the same folder gets a storage folder of its own ("…-1").

/** The record's file for one workspace folder ('' when none is open). */
export function autoStartedRecordFile(globalStorage: string, workspaceFolder: string): string {
  const key = createHash('sha256').update(workspaceFolder).digest('hex').slice(0, 16);
  return path.join(globalStorage, 'auto-started', `${key}.json`);
}

/** The run recorded in `file`, if a readable record is there (none yet, or damaged: none). */
export function readAutoStartedRecord(file: string): AutoStarted | undefined {
  try {
    return readAutoStarted(JSON.parse(readFileSync(file, 'utf8')));
  } catch {
    return undefined;
  }
}

/** Records the run, replacing the file whole (a window reading it meanwhile sees the old or the new). */
export function writeAutoStartedRecord(file: string, started: AutoStarted): void {
  mkdirSync(path.dirname(file), { recursive: true });
  const partial = `${file}.${process.pid}.partial`;
  writeFileSync(partial, JSON.stringify({ request: started.request, runId: started.runId }));
  renameSync(partial, file);
}
