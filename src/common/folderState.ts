import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';

// What the extension remembers for one workspace folder, kept as a file in its global storage
// (ExtensionContext.globalStorageUri) on the machine the extension host runs on. Not
// workspaceState: in VS Code in a browser (code-server) that is kept in the browser's own storage,
// so the same folder opened from another browser, a private window or a fresh profile would not
// see it. Not storageUri either: a second window open on the same folder gets a storage folder of
// its own ("…-1").

/** The file of `kind` for one workspace folder ('' when none is open). */
export function folderStateFile(globalStorage: string, kind: string, workspaceFolder: string): string {
  const key = createHash('sha256').update(workspaceFolder).digest('hex').slice(0, 16);
  return path.join(globalStorage, kind, `${key}.json`);
}

/** The JSON value in `file`; undefined when there is none yet or it does not parse. */
export function readFolderState(file: string): unknown {
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as unknown;
  } catch {
    return undefined;
  }
}

/** Writes `value` whole: a window reading the file meanwhile sees the old value or the new one. */
export function writeFolderState(file: string, value: unknown): void {
  mkdirSync(path.dirname(file), { recursive: true });
  const partial = `${file}.${process.pid}.partial`;
  writeFileSync(partial, JSON.stringify(value));
  renameSync(partial, file);
}
