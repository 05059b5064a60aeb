import * as assert from 'node:assert/strict';
import { isMoving, iterationText } from '../../src/runs/runText';
import { deviceLabel, statusText } from '../../src/statusText';
import type { RunEntry } from '../../src/runs/runsModel';
import { aMetricsRecord, aRunInfo } from '../builders/protocol';

/** A run as the runs model holds it, its trajectories read up to its completed iterations. */
function anEntry(
  info: RunEntry['info'],
  progress: RunEntry['progress'],
  latestMetrics: RunEntry['latestMetrics'] = null,
): RunEntry {
  return { info, progress, latestMetrics, trajectoryIteration: info.iteration, config: undefined };
}

describe('status bar text', () => {
  it('says the host state when it is not running', () => {
    assert.equal(statusText({ state: 'stopped' }), '$(circle-slash) EMPO²: host stopped');
    assert.equal(statusText({ state: 'crashed' }), '$(error) EMPO²: host crashed');
    assert.equal(statusText({ state: 'reconnecting' }), '$(loading~spin) EMPO²: reconnecting…');
  });

  it('shows device, run, the iteration in progress (as the progress item does) and the latest score', () => {
    const run = anEntry(
      aRunInfo({ runId: 'builtin-1', state: 'running', live: true, iteration: 3, iterations: 40 }),
      { iteration: 4, phase: 'rollout', done: 2, total: 15 },
      aMetricsRecord({ iteration: 3, 'rollout/return': 0.4217 }),
    );
    const text = statusText({
      state: 'running',
      device: { kind: 'cpu', name: 'CPU (2 cores)', memoryBytes: null },
      run,
    });
    assert.equal(text, '$(sync~spin) EMPO²: CPU · builtin-1 · iter 4/40 rollout · score 0.42');
    assert.equal(
      iterationText(run),
      'iteration 4/40: rollout step 2/15',
      'the progress item names the same iteration, and what it counts',
    );
  });

  it("names each phase of an iteration, counting the rollout's steps, the tips written and stored and the update's optimizer steps", () => {
    const run = anEntry(aRunInfo({ runId: 'builtin-1', state: 'running', live: true, iteration: 3, iterations: 40 }), {
      iteration: 4,
      phase: 'rollout',
      done: 2,
      total: 15,
    });
    for (const phase of ['reflection', 'novelty', 'storing', 'update', 'evaluation'] as const) {
      const later = { ...run, progress: { iteration: 4, phase, done: 0, total: 1 } };
      assert.equal(iterationText(later), `iteration 4/40: ${phase}`);
      assert.equal(
        statusText({ state: 'running', run: later }),
        `$(sync~spin) EMPO²: host running · builtin-1 · iter 4/40 ${phase}`,
      );
    }
    const updating = { ...run, progress: { iteration: 4, phase: 'update' as const, done: 2, total: 9 } };
    assert.equal(iterationText(updating), 'iteration 4/40: update step 2/9');
    const reflecting = { ...run, progress: { iteration: 4, phase: 'reflection' as const, done: 3, total: 8 } };
    assert.equal(iterationText(reflecting), 'iteration 4/40: writing tip 3/8', 'the policy writes the tips');
    const storing = { ...run, progress: { iteration: 4, phase: 'storing' as const, done: 3, total: 8 } };
    assert.equal(
      iterationText(storing),
      'iteration 4/40: storing tips 3/8',
      'the memory stores them: not the writing, stuck at 8/8',
    );
  });

  it('shows a paused run paused: no spinner, the iteration it paused after', () => {
    const run = anEntry(aRunInfo({ runId: 'builtin-1', state: 'paused', live: true, iteration: 8, iterations: 40 }), {
      iteration: 8,
      phase: 'update',
      done: 0,
      total: 1,
    });
    assert.equal(
      statusText({ state: 'running', run }),
      '$(debug-pause) EMPO²: host running · builtin-1 · paused after iter 8/40',
    );
    assert.equal(iterationText(run), 'paused after iteration 8/40');
    assert.equal(isMoving(run), false, 'no progress item (it would spin)');
    const interrupted = { ...run, info: { ...run.info, state: 'interrupted' as const, live: false } };
    assert.equal(
      statusText({ state: 'running', run: interrupted }),
      '$(debug-disconnect) EMPO²: host running · builtin-1 · interrupted after iter 8/40',
    );
  });

  it("names the iteration another process is in, from its progress, with no spinner and not this host's device", () => {
    const run = anEntry(
      aRunInfo({ runId: 'builtin-1', state: 'running', live: false, iteration: 5, iterations: 40 }),
      { iteration: 6, phase: 'rollout', done: 4, total: 15 },
      aMetricsRecord({ iteration: 5, 'rollout/return': 0.4217 }),
    );
    const cpu = { kind: 'cpu' as const, name: 'CPU (2 cores)', memoryBytes: null };
    assert.equal(
      statusText({ state: 'running', device: cpu, run }),
      '$(pulse) EMPO²: builtin-1 · iter 6/40 rollout elsewhere · score 0.42',
    );
    assert.equal(iterationText(run), 'iteration 6/40: rollout step 4/15 in another process');
    // Before its first progress.json, or once the written iteration caught up: the last iteration written.
    for (const progress of [
      null,
      { iteration: 5, phase: 'rollout' as const, done: 4, total: 15 },
      { iteration: 1, phase: 'preparing' as const, done: 3, total: 9 },
    ]) {
      assert.equal(iterationText({ ...run, progress }), 'running in another process, iteration 5/40');
      assert.equal(iterationText({ ...run, progress }, true), 'running elsewhere, iter 5/40');
    }
    const finished = { ...run, info: { ...run.info, state: 'finished' as const, iteration: 40 }, progress: null };
    assert.equal(
      statusText({ state: 'running', device: cpu, run: finished }),
      '$(pulse) EMPO²: CPU · builtin-1 · finished, iter 40/40 · score 0.42',
    );
  });

  it("gives a rerun branch no total: its config is its parent's, and its rerun ends at checkpoint + K", () => {
    const branch = anEntry(
      aRunInfo({
        runId: 'builtin-1-branch-1',
        state: 'finished',
        iteration: 4,
        iterations: 40,
        parent: { runId: 'builtin-1', checkpoint: 3, adopted: false },
      }),
      null,
    );
    assert.equal(iterationText(branch), 'finished, iteration 4');
    const adopted = {
      ...branch,
      info: { ...branch.info, parent: { runId: 'builtin-1', checkpoint: 3, adopted: true } },
    };
    assert.equal(iterationText(adopted), 'finished, iteration 4/40', 'an adopted branch trains as a run of its own');
  });

  it('names a GPU with its memory', () => {
    assert.equal(
      deviceLabel({ kind: 'cuda', name: 'NVIDIA H200', memoryBytes: 150_000_000_000, count: 1 }),
      'NVIDIA H200 140 GB',
    );
    assert.equal(
      deviceLabel({ kind: 'cuda', name: 'NVIDIA A100-SXM4-40GB', memoryBytes: 42_505_273_344, count: 8 }),
      'NVIDIA A100-SXM4-40GB 40 GB ×8',
    );
    assert.equal(deviceLabel(undefined), undefined);
  });
});
