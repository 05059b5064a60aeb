// What local scoring reads of a run folder on disk, with no host: the episode list
// (trajectories/index.jsonl), one episode's full record (trajectories/iter-NNNNNN.jsonl), and the
// ONNX exports that `empo2-host export-onnx` wrote into it (onnx/iter-NNNNNN/). The layout is
// host/empo2/run_folder/folder.py's (docs/run-folder.md). Read-only; a torn last line (a run killed
// mid-write) is skipped, as the host's own reader skips it. No `vscode` import.

import { existsSync, readdirSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import type { Episode, TrajectorySummary } from '../rpc/protocol';
import { MANIFEST_FILE, ScoringError } from './onnxPolicy';

/** Where export-onnx puts a run checkpoint's export (host/empo2/export/onnx.py ONNX_FOLDER). */
export const ONNX_FOLDER = 'onnx';

/** run_folder/folder.py `iteration_name`. */
export function iterationName(iteration: number): string {
  return `iter-${String(iteration).padStart(6, '0')}`;
}

function jsonLines<T>(file: string): T[] {
  const records: T[] = [];
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    if (!line.trim()) {
      continue;
    }
    try {
      records.push(JSON.parse(line) as T);
    } catch {
      // A torn line: the writer was killed mid-line; the record is not there.
    }
  }
  return records;
}

export function isRunFolder(folder: string): boolean {
  return existsSync(path.join(folder, 'run.json'));
}

/** Every episode's summary line, in the order the run wrote them. */
export function episodeSummaries(run: string): TrajectorySummary[] {
  const index = path.join(run, 'trajectories', 'index.jsonl');
  if (!isRunFolder(run)) {
    throw new ScoringError(`${run} is not a run folder (no run.json).`);
  }
  return existsSync(index) ? jsonLines<TrajectorySummary>(index) : [];
}

/** An episode's full record, or a ScoringError saying why it is not there. */
export function episodeRecord(run: string, iteration: number, episodeId: string): Episode {
  const file = path.join(run, 'trajectories', `${iterationName(iteration)}.jsonl`);
  if (!existsSync(file)) {
    throw new ScoringError(`the run folder has no ${path.relative(run, file)}; copy the whole run folder.`);
  }
  const record = jsonLines<Episode>(file).find((e) => e.id === episodeId);
  if (!record) {
    throw new ScoringError(`episode ${episodeId} is not in ${path.relative(run, file)}.`);
  }
  return record;
}

/** The checkpoint iterations with a whole ONNX export in the run folder, oldest first. */
export function exportedIterations(run: string): number[] {
  const folder = path.join(run, ONNX_FOLDER);
  if (!existsSync(folder)) {
    return [];
  }
  return readdirSync(folder)
    .map((name) => /^iter-(\d{6,})$/.exec(name))
    .filter((m): m is RegExpExecArray => m !== null && existsSync(path.join(folder, m[0], MANIFEST_FILE)))
    .map((m) => Number(m[1]))
    .sort((a, b) => a - b);
}

export function exportFolder(run: string, iteration: number): string {
  return path.join(run, ONNX_FOLDER, iterationName(iteration));
}

/**
 * The export that reproduces an episode's recorded log-probs: iteration i is played by the
 * checkpoint of iteration i − 1 (the host replay's default, debug/launch.py). Undefined when that
 * one was not exported.
 */
export function producingExport(run: string, iteration: number): string | undefined {
  return exportedIterations(run).includes(iteration - 1) ? exportFolder(run, iteration - 1) : undefined;
}
