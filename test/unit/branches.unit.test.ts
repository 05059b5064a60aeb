import * as assert from 'node:assert/strict';
import { branchPickItem, branchRuns } from '../../src/rerun/branches';
import type { RunEntry } from '../../src/runs/runsModel';
import type { RunInfo } from '../../src/rpc/protocol';

// The runs the branch commands offer from the palette: those a rerun made, not training now.

function entry(runId: string, info: Partial<RunInfo>): RunEntry {
  return {
    info: {
      runId,
      path: `/runs/${runId}`,
      state: 'finished',
      iteration: 3,
      iterations: 3,
      live: false,
      ...info,
    } as RunInfo,
    progress: null,
    latestMetrics: null,
    trajectoryIteration: 0,
    config: undefined,
  };
}

describe('branch runs', () => {
  it('are the runs with a parent that do not train, each picked by its id and its origin', () => {
    const parent = entry('builtin-1', { state: 'paused', live: true });
    const branch = entry('builtin-1-rerun-1', { parent: { runId: 'builtin-1', checkpoint: 13, adopted: false } });
    const adopted = entry('builtin-1-rerun-2', { parent: { runId: 'builtin-1', checkpoint: 9, adopted: true } });
    const training = entry('builtin-1-rerun-3', {
      state: 'running',
      live: true,
      parent: { runId: 'builtin-1', checkpoint: 9, adopted: true },
    });
    assert.deepEqual(
      branchRuns([parent, branch, adopted, training]).map((e) => e.info.runId),
      ['builtin-1-rerun-1', 'builtin-1-rerun-2'],
    );
    assert.deepEqual(branchPickItem(branch), {
      label: 'builtin-1-rerun-1',
      description: 'from builtin-1 at iteration 13',
      runId: 'builtin-1-rerun-1',
    });
    assert.equal(branchPickItem(adopted).description, 'from builtin-1 at iteration 9 · adopted');
    assert.deepEqual(branchRuns([parent]), []);
  });
});
