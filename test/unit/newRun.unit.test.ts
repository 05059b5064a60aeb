import * as assert from 'node:assert/strict';
import { newRunObstacle, STOP_AND_START } from '../../src/runs/newRunObstacle';
import { isRunConfigText } from '../../src/runs/runConfigFiles';
import type { RunInfo } from '../../src/rpc/protocol';
import type { RunEntry } from '../../src/runs/runsModel';
import { aRunInfo } from '../builders/protocol';

// "New Training Run": what it says when a run is in the way, and which files it offers.

function aLiveRun(state: RunInfo['state'], live = true): RunEntry {
  return { info: aRunInfo({ runId: 'builtin-1', state, live, iteration: 5, iterations: 40 }), progress: null, latestMetrics: null, trajectoryIteration: 5, config: undefined };
}

describe('what stands in the way of a new run, said before its first question', () => {
  it('starts at once while no run is live', () => {
    assert.equal(newRunObstacle(undefined), undefined);
    assert.equal(newRunObstacle(aLiveRun('interrupted', false)), undefined);
    assert.equal(newRunObstacle(aLiveRun('finished', false)), undefined);
  });

  it('asks to stop a paused run, not to pause it (a paused run keeps the host\'s one slot)', () => {
    const obstacle = newRunObstacle(aLiveRun('paused'))!;
    assert.equal(obstacle.message, 'builtin-1 is paused. The host trains one run at a time, and a paused run keeps its place: stop builtin-1 to start a new run.');
    assert.ok(obstacle.canStop);
    assert.match(obstacle.detail, new RegExp(`^"${STOP_AND_START}" stops builtin-1`));
    assert.doesNotMatch(obstacle.message + obstacle.detail, /pause it|pause or stop/);
  });

  it('asks to stop a training run, and only waits for one already stopping', () => {
    assert.match(newRunObstacle(aLiveRun('running'))!.message, /^builtin-1 is training\. .*stop builtin-1 to start a new run\.$/);
    assert.ok(newRunObstacle(aLiveRun('pausing'))!.canStop);
    assert.equal(newRunObstacle(aLiveRun('stopping'))!.canStop, false);
  });
});

describe('which files New Training Run offers as run configurations', () => {
  const fields = ['name', 'root', 'seed', 'iterations', 'env', 'policy', 'algo', 'memory', 'eval'];

  it('offers a JSON object whose keys are all config fields', () => {
    assert.ok(isRunConfigText(JSON.stringify({ iterations: 3, algo: { p_memory: 0 } }), fields));
    assert.ok(isRunConfigText('{"seed": 1}', undefined), 'a host that does not name its fields: any object');
  });

  it('leaves out a bench probe, a build manifest, a list, an empty object and broken JSON', () => {
    const probe = { run: 'empo2-per-episode-key-seed50', iterations: 100, episodes: 798, keys: { step: { entries: 3006 } } };
    assert.equal(isRunConfigText(JSON.stringify(probe), fields), false);
    assert.equal(isRunConfigText(JSON.stringify({ recipe: 'builtin', sha256: 'aa' }), fields), false);
    assert.equal(isRunConfigText('[{"seed": 1}]', fields), false);
    assert.equal(isRunConfigText('{}', fields), false);
    assert.equal(isRunConfigText('{"seed": 1', fields), false);
  });
});
