import type { RunEntry } from '../runs/runsModel';

// Which runs the branch commands (Compare with Parent, Adopt Branch, Delete Branch) act on: the
// runs a rerun made that do not train now, as a tree row marks them (`.branch`, runContext.ts).
// The palette offers the commands while there is one (the `empo2.hasBranch` context key).

export const HAS_BRANCH_CONTEXT = 'empo2.hasBranch';

export function isBranch(entry: RunEntry): boolean {
  return entry.info.parent !== undefined && !entry.info.live;
}

export function branchRuns(runs: readonly RunEntry[]): RunEntry[] {
  return runs.filter(isBranch);
}

/** A branch in a quick pick: its id, and where it branched off. */
export function branchPickItem(entry: RunEntry): { label: string; description: string; runId: string } {
  const parent = entry.info.parent!;
  const adopted = parent.adopted ? ' · adopted' : '';
  return {
    label: entry.info.runId,
    description: `from ${parent.runId} at iteration ${parent.checkpoint}${adopted}`,
    runId: entry.info.runId,
  };
}
