import * as assert from 'node:assert/strict';
import { Notifications, Requests } from '../../src/rpc/methods';
import type { RunInfo } from '../../src/rpc/protocol';
import { RunsModel } from '../../src/runs/runsModel';
import { FakeHost } from '../builders/fakeHost';
import { aRunInfo } from '../builders/protocol';

// Which run is live and which is current, as one host trains runs one after another. The
// notifications are the host's own sequence (host/empo2/server/runs.py): run.start answers
// `starting`, run/state says `running`, and the end comes in a run/state that still says
// `live: true` (the host lets go of the run just after publishing it; nothing follows).

let seq = 0;

function trainAndFinish(host: FakeHost, runs: RunsModel, runId: string): void {
  const run = (fields: Partial<RunInfo>) => aRunInfo({ runId, path: `/tmp/runs/${runId}`, iterations: 3, ...fields });
  runs.select(runs.absorbInfo(run({ state: 'starting', live: true, iteration: 0 })).info.runId);
  host.notify(Notifications.runState, { seq: ++seq, run: run({ state: 'running', live: true, iteration: 0 }) });
  host.notify(Notifications.runState, { seq: ++seq, run: run({ state: 'finished', live: true, iteration: 3 }) });
}

function aModel(): { host: FakeHost; runs: RunsModel } {
  const host = new FakeHost()
    .handle(Requests.runStatus, () => ({ run: null }))
    .handle(Requests.runList, () => ({ runs: [], roots: ['/tmp/runs'] }));
  return { host, runs: new RunsModel(host) };
}

describe('RunsModel: the live run and the current run', () => {
  it('a run that finished is not live, though the host\'s last run/state said live: true', () => {
    const { host, runs } = aModel();
    trainAndFinish(host, runs, 'run-a');
    trainAndFinish(host, runs, 'run-b');
    assert.equal(runs.live, undefined);
    assert.deepEqual(runs.list().map((entry) => [entry.info.runId, entry.info.state, entry.info.live]).sort(), [['run-a', 'finished', false], ['run-b', 'finished', false]]);
    assert.deepEqual(host.violations, []);
  });

  it('after a comparison\'s runs trained, an opened run folder is current and no finished run is live', () => {
    const { host, runs } = aModel();
    trainAndFinish(host, runs, 'run-a');
    trainAndFinish(host, runs, 'run-b');
    // Open Run Folder: run.open's status, then select (src/runs/openRunFolder.ts).
    runs.select(runs.absorbInfo(aRunInfo({ runId: 'synthetic-100k-metrics', path: '/tmp/runs/synthetic-100k-metrics', iteration: 100_000, iterations: 100_000 })).info.runId);
    assert.equal(runs.current?.info.runId, 'synthetic-100k-metrics');
    // What Pause/Stop/Show Metrics fall back on: was run-a (the first run trained), not the current one.
    assert.equal(runs.live?.info.runId, undefined);
  });

  it('the run training now is live, not an earlier run the host finished', () => {
    const { host, runs } = aModel();
    trainAndFinish(host, runs, 'run-a');
    runs.absorbInfo(aRunInfo({ runId: 'run-b', state: 'starting', live: true, iteration: 0 }));
    host.notify(Notifications.runState, { seq: ++seq, run: aRunInfo({ runId: 'run-b', state: 'running', live: true, iteration: 1 }) });
    assert.equal(runs.live?.info.runId, 'run-b');
    assert.equal(runs.list()[0].info.runId, 'run-b');
  });

  it('a paused run stays live (the host holds it at its iteration boundary)', () => {
    const { host, runs } = aModel();
    runs.absorbInfo(aRunInfo({ runId: 'run-a', state: 'running', live: true }));
    host.notify(Notifications.runState, { seq: ++seq, run: aRunInfo({ runId: 'run-a', state: 'paused', live: true }) });
    assert.equal(runs.live?.info.runId, 'run-a');
  });

  it('reload after a reconnect reads the live run\'s status only for a run in a training state', async () => {
    const host = new FakeHost()
      .handle(Requests.runStatus, () => ({ run: null }))
      .handle(Requests.runList, () => ({ runs: [aRunInfo({ runId: 'done', state: 'finished', live: true })], roots: ['/tmp/runs'] }));
    const runs = new RunsModel(host);
    await runs.reload();
    assert.equal(runs.live, undefined);
    assert.deepEqual(host.callsOf(Requests.runStatus.method), []);
  });
});
