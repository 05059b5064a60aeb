import * as assert from 'node:assert/strict';
import { Notifications, Requests } from '../../src/rpc/methods';
import type { RunInfo, RunStatus } from '../../src/rpc/protocol';
import { inActiveState, isActive, latestReturn, RunsModel, type RunEntry } from '../../src/runs/runsModel';
import { FakeHost } from '../builders/fakeHost';
import { aMetricsRecord, aRunInfo, aRunStatus, aSummary } from '../builders/protocol';

// The runs model against a fake host: which runs it lists and in what order, which one is
// current, and how run/state, run/progress, run/metrics and trajectory/added keep them current.

function setup(runs: RunInfo[], statuses: Record<string, RunStatus> = {}) {
  const host = new FakeHost()
    .handle(Requests.runList, () => ({ runs, roots: ['/home/ada/project/.empo2/runs'] }))
    .handle(Requests.runStatus, ({ runId }) => ({ run: (runId && statuses[runId]) || null }));
  const model = new RunsModel(host);
  const events = { runs: 0, run: [] as RunEntry[], current: [] as Array<string | undefined>, failed: [] as string[] };
  model.onDidChangeRuns(() => events.runs++);
  model.onDidChangeRun((entry) => events.run.push(entry));
  model.onDidChangeCurrent((entry) => events.current.push(entry?.info.runId));
  model.onDidFailToLoad((message) => events.failed.push(message));
  return { host, model, events };
}

const ids = (entries: readonly RunEntry[]) => entries.map((entry) => entry.info.runId);
const aProgress = (done: number) => ({ iteration: 3, phase: 'rollout' as const, done, total: 8 });

describe('RunsModel', () => {
  it('lists the live run first, then the most recently updated, then by name', async () => {
    const { model, events } = setup([
      aRunInfo({ runId: 'old', updated: 100 }),
      aRunInfo({ runId: 'never', updated: null }),
      aRunInfo({ runId: 'b-new', updated: 300 }),
      aRunInfo({ runId: 'a-new', updated: 300 }),
      aRunInfo({ runId: 'live', updated: 50, live: true, state: 'running' }),
    ]);
    await model.reload();
    assert.deepEqual(ids(model.list()), ['live', 'a-new', 'b-new', 'old', 'never']);
    assert.equal(model.live?.info.runId, 'live');
    assert.equal(model.current?.info.runId, 'live');
    assert.equal(events.runs, 1, 'one change for the whole list');
    assert.deepEqual(events.run, [], 'a reload tells the list, not each run');
    assert.deepEqual(events.current, ['live']);
  });

  it('makes the newest run current when none is live, and a selected one over the live one', async () => {
    const { model, events } = setup([aRunInfo({ runId: 'old', updated: 1 }), aRunInfo({ runId: 'new', updated: 2 })]);
    await model.reload();
    assert.equal(model.live, undefined);
    assert.equal(model.current?.info.runId, 'new');
    model.select('old');
    assert.equal(model.current?.info.runId, 'old');
    assert.deepEqual(events.current, ['new', 'old']);
    model.select('old'); // already current: nothing changes
    model.select('no-such-run'); // unknown: ignored
    assert.deepEqual(events.current, ['new', 'old']);
    assert.equal(model.current?.info.runId, 'old');
  });

  it('reads the status of a selected run once, for its config, and keeps the config afterwards', async () => {
    const config = { env: { name: 'builtin', tasks: ['grow-plant'] } };
    const { host, model } = setup([aRunInfo({ runId: 'a', updated: 2 }), aRunInfo({ runId: 'b', updated: 1 })], {
      b: aRunStatus({ runId: 'b', updated: 1, config, latestMetrics: aMetricsRecord({ iteration: 2 }) }),
    });
    await model.reload();
    assert.deepEqual(host.callsOf('run.status'), [], 'no run is live: no status read on reload');
    model.select('b');
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(host.callsOf('run.status'), [{ runId: 'b' }]);
    assert.deepEqual(model.get('b')?.config, config);
    assert.equal(model.get('b')?.latestMetrics?.iteration, 2);
    model.select('a'); // no config known: read (the host has no status for it)
    model.select('b'); // its config is known: no second read
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(host.callsOf('run.status'), [{ runId: 'b' }, { runId: 'a' }]);
    host.notify(Notifications.runState, { seq: 1, run: aRunInfo({ runId: 'b', updated: 5 }) });
    assert.deepEqual(model.get('b')?.config, config, 'a state change keeps the config');
    assert.deepEqual(host.violations, []);
  });

  it("reads the live run's status on reload: its config, progress and latest metrics", async () => {
    const live = aRunInfo({ runId: 'live', live: true, state: 'running', iteration: 3, iterations: 9 });
    const status = aRunStatus({ ...live, progress: aProgress(4), latestMetrics: aMetricsRecord({ iteration: 3 }) });
    const { host, model } = setup([aRunInfo({ runId: 'other' }), live], { live: status });
    await model.reload();
    assert.deepEqual(host.callsOf('run.status'), [{ runId: 'live' }]);
    const entry = model.get('live')!;
    assert.deepEqual(entry.progress, aProgress(4));
    assert.equal(entry.latestMetrics?.iteration, 3);
    assert.deepEqual(entry.config, status.config);
    assert.deepEqual(entry.info, live, 'only the RunInfo fields of the status are kept');
    assert.equal(latestReturn(entry.latestMetrics), 0.25);
  });

  it("keeps a run's error and branch origin, and nothing else a status carries", () => {
    const { model } = setup([]);
    const parent = { runId: 'base', checkpoint: 2, adopted: false };
    const failed = model.absorbStatus(aRunStatus({ runId: 'x', state: 'failed', error: 'out of memory', parent }));
    assert.deepEqual(failed.info, aRunInfo({ runId: 'x', state: 'failed', error: 'out of memory', parent }));
    const plain = model.absorbInfo(aRunInfo({ runId: 'y' }));
    assert.deepEqual(Object.keys(plain.info).sort(), [
      'iteration',
      'iterations',
      'live',
      'path',
      'runId',
      'state',
      'updated',
    ]);
  });

  it('drops runs the host no longer lists on reload, and says when the current run changed', async () => {
    let listed = [aRunInfo({ runId: 'a', updated: 2 }), aRunInfo({ runId: 'b', updated: 1 })];
    const host = new FakeHost()
      .handle(Requests.runList, () => ({ runs: listed, roots: ['/home/ada/project/.empo2/runs'] }))
      .handle(Requests.runStatus, () => ({ run: null }));
    const model = new RunsModel(host);
    const current: Array<string | undefined> = [];
    model.onDidChangeCurrent((entry) => current.push(entry?.info.runId));
    await model.reload();
    await model.reload(); // the same list: the current run did not change
    assert.deepEqual(current, ['a']);
    listed = [aRunInfo({ runId: 'b', updated: 1 })];
    await model.reload();
    assert.deepEqual(ids(model.list()), ['b']);
    assert.equal(model.get('a'), undefined);
    assert.deepEqual(current, ['a', 'b']);
  });

  it('keeps what it knew of the runs a reload lists again', async () => {
    const config = { env: { name: 'builtin', tasks: ['grow-plant'] } };
    const { host, model } = setup([aRunInfo({ runId: 'a', iteration: 2 })], {
      a: aRunStatus({ runId: 'a', iteration: 2, config }),
    });
    await model.reload();
    await model.refreshStatus('a');
    host.notify(Notifications.trajectoryAdded, { seq: 1, runId: 'a', summaries: [aSummary({ iteration: 3 })] });
    await model.reload();
    assert.deepEqual(model.get('a')?.config, config);
    assert.equal(model.get('a')?.trajectoryIteration, 3);
  });

  it('reloads an empty list without complaint: no run, none current', async () => {
    const { model, events } = setup([]);
    await model.reload();
    assert.deepEqual(model.list(), []);
    assert.equal(model.current, undefined);
    assert.deepEqual(events.failed, []);
    assert.equal(events.runs, 1);
  });

  it('reloads when the host connects, and says so when the list cannot be read', async () => {
    const host = new FakeHost().handle(Requests.runList, () => ({
      runs: [aRunInfo()],
      roots: ['/home/ada/project/.empo2/runs'],
    }));
    const model = new RunsModel(host);
    host.connect();
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(ids(model.list()), ['run-1']);
    const failures: string[] = [];
    model.onDidFailToLoad((message) => failures.push(message));
    host.handle(Requests.runList, () => {
      throw new Error('the host is busy');
    });
    await model.reload();
    assert.deepEqual(failures, ['cannot list runs: the host is busy']);
    assert.deepEqual(ids(model.list()), ['run-1'], 'what was listed stays');
  });

  it("keeps what it had when a run's status cannot be read or the host no longer knows it", async () => {
    const { host, model } = setup([aRunInfo({ runId: 'a' })]);
    await model.reload();
    assert.equal(await model.refreshStatus('a'), undefined, 'status null: nothing new');
    host.handle(Requests.runStatus, () => {
      throw new Error('unknown run');
    });
    assert.equal(await model.refreshStatus('a'), undefined);
    assert.equal(model.get('a')?.info.runId, 'a');
    host.handle(Requests.runStatus, () => ({ run: aRunStatus({ runId: 'a', iteration: 2 }) }));
    assert.equal((await model.refreshStatus('a'))?.info.iteration, 2);
  });

  it("follows run/state: a new run is listed, a live run's progress is kept until it stops", async () => {
    const { host, model, events } = setup([]);
    await model.reload();
    events.runs = 0;
    host.notify(Notifications.runState, {
      seq: 1,
      run: aRunInfo({ runId: 'r', state: 'starting', live: true, iteration: 0 }),
    });
    assert.equal(events.runs, 1, 'a new run changes the list');
    assert.deepEqual(events.current, ['r'], 'the new live run is current');
    host.notify(Notifications.runProgress, { seq: 2, runId: 'r', progress: aProgress(1) });
    host.notify(Notifications.runState, {
      seq: 3,
      run: aRunInfo({ runId: 'r', state: 'running', live: true, iteration: 0 }),
    });
    assert.equal(events.runs, 1, 'same run, still live: the list did not change');
    assert.deepEqual(model.get('r')?.progress, aProgress(1), 'an active state keeps the progress');
    assert.deepEqual(
      events.run.map((e) => [e.info.state, e.progress?.done]),
      [
        ['starting', undefined],
        ['starting', 1],
        ['running', 1],
      ],
    );
    host.notify(Notifications.runState, {
      seq: 4,
      run: aRunInfo({ runId: 'r', state: 'finished', live: false, iteration: 2 }),
    });
    assert.equal(events.runs, 2, 'no longer live: the order may change');
    assert.equal(model.get('r')?.progress, null, 'a finished run has no progress');
    assert.equal(model.live, undefined);
    assert.deepEqual(host.violations, []);
  });

  it('tells a change of the current run as a change of current, and of another run only as a run change', async () => {
    const { host, model, events } = setup([aRunInfo({ runId: 'a', updated: 2 }), aRunInfo({ runId: 'b', updated: 1 })]);
    await model.reload();
    events.current.length = 0;
    host.notify(Notifications.runState, { seq: 1, run: aRunInfo({ runId: 'b', updated: 1, state: 'stopped' }) });
    host.notify(Notifications.runProgress, { seq: 2, runId: 'b', progress: aProgress(1) });
    assert.deepEqual(events.current, []);
    host.notify(Notifications.runState, { seq: 3, run: aRunInfo({ runId: 'a', updated: 2, state: 'stopped' }) });
    host.notify(Notifications.runProgress, { seq: 4, runId: 'a', progress: aProgress(2) });
    assert.deepEqual(events.current, ['a', 'a']);
    assert.deepEqual(
      events.run.map((e) => e.info.runId),
      ['b', 'b', 'a', 'a'],
    );
  });

  it('ignores progress, metrics and trajectories of a run it does not list', async () => {
    const { host, model, events } = setup([aRunInfo({ runId: 'a' })]);
    await model.reload();
    host.notify(Notifications.runProgress, { seq: 1, runId: 'ghost', progress: aProgress(1) });
    host.notify(Notifications.runMetrics, { seq: 2, runId: 'ghost', records: [aMetricsRecord({ iteration: 9 })] });
    host.notify(Notifications.trajectoryAdded, { seq: 3, runId: 'ghost', summaries: [aSummary({ iteration: 9 })] });
    assert.deepEqual(ids(model.list()), ['a']);
    assert.deepEqual(events.run, []);
  });

  it('takes the last metrics record as the latest, and its iteration when it is ahead', async () => {
    const { host, model } = setup([aRunInfo({ runId: 'a', live: true, state: 'running', iteration: 2 })]);
    await model.reload();
    host.notify(Notifications.runMetrics, {
      seq: 1,
      runId: 'a',
      records: [
        aMetricsRecord({ iteration: 3, 'rollout/return': 0.1 }),
        aMetricsRecord({ iteration: 4, 'rollout/return': 0.9 }),
      ],
    });
    assert.equal(model.get('a')?.info.iteration, 4);
    assert.equal(latestReturn(model.get('a')!.latestMetrics), 0.9);
    // A late record of an older iteration (a re-sent page) never moves the run backwards.
    host.notify(Notifications.runMetrics, { seq: 2, runId: 'a', records: [aMetricsRecord({ iteration: 1 })] });
    assert.equal(model.get('a')?.info.iteration, 4);
    assert.equal(model.get('a')?.latestMetrics?.iteration, 1);
  });

  it('survives a run/metrics without records (the schema forbids it; a broken host may send it)', async () => {
    const { host, model, events } = setup([aRunInfo({ runId: 'a' })]);
    await model.reload();
    host.notify(Notifications.runMetrics, { seq: 1, runId: 'a', records: [] });
    assert.equal(model.get('a')?.latestMetrics, null);
    assert.deepEqual(events.run, []);
  });

  it('raises the trajectory iteration to the newest summary, never lowers it', async () => {
    const { host, model, events } = setup([aRunInfo({ runId: 'a', iteration: 2 })]);
    await model.reload();
    assert.equal(model.get('a')?.trajectoryIteration, 2, 'starts at the completed iterations');
    host.notify(Notifications.trajectoryAdded, {
      seq: 1,
      runId: 'a',
      summaries: [aSummary({ iteration: 3 }), aSummary({ iteration: 5 }), aSummary({ iteration: 4 })],
    });
    assert.equal(model.get('a')?.trajectoryIteration, 5);
    assert.equal(events.run.length, 1);
    host.notify(Notifications.trajectoryAdded, { seq: 2, runId: 'a', summaries: [aSummary({ iteration: 5 })] });
    host.notify(Notifications.trajectoryAdded, { seq: 3, runId: 'a', summaries: [aSummary({ iteration: 1 })] });
    assert.equal(model.get('a')?.trajectoryIteration, 5);
    assert.equal(events.run.length, 1, 'nothing newer: no change');
    host.notify(Notifications.runState, { seq: 4, run: aRunInfo({ runId: 'a', iteration: 3 }) });
    assert.equal(model.get('a')?.trajectoryIteration, 5, 'a state change keeps it');
  });

  it("never moves a live run's iteration back while it stays live, but takes a stopped run's as told", async () => {
    const { host, model } = setup([]);
    host.notify(Notifications.runState, {
      seq: 1,
      run: aRunInfo({ runId: 'a', state: 'running', live: true, iteration: 5 }),
    });
    host.notify(Notifications.runState, {
      seq: 2,
      run: aRunInfo({ runId: 'a', state: 'running', live: true, iteration: 4 }),
    });
    assert.equal(model.get('a')?.info.iteration, 5);
    host.notify(Notifications.runState, {
      seq: 3,
      run: aRunInfo({ runId: 'a', state: 'stopped', live: false, iteration: 3 }),
    });
    assert.equal(model.get('a')?.info.iteration, 3, 'the host read it from the run folder');
    host.notify(Notifications.runState, {
      seq: 4,
      run: aRunInfo({ runId: 'a', state: 'starting', live: true, iteration: 2 }),
    });
    assert.equal(model.get('a')?.info.iteration, 2, 'a fresh start after a stop: no live iteration to keep');
  });

  it('when the link drops: live runs stay listed but are no longer live, and lose their progress', async () => {
    const live = aRunInfo({ runId: 'live', live: true, state: 'running' });
    const { host, model, events } = setup([live, aRunInfo({ runId: 'done' })], {
      live: aRunStatus({ ...live, progress: aProgress(2) }),
    });
    await model.reload();
    const doneBefore = model.get('done');
    events.runs = 0;
    host.disconnect();
    assert.equal(events.runs, 1);
    assert.deepEqual(ids(model.list()).sort(), ['done', 'live']);
    assert.equal(model.live, undefined);
    assert.equal(model.get('live')?.info.live, false);
    assert.equal(model.get('live')?.info.state, 'running', 'the last state heard');
    assert.equal(model.get('live')?.progress, null);
    assert.equal(model.get('done'), doneBefore, 'a run that was not live is untouched');
  });
});

describe('RunsModel when the host is gone', () => {
  it('changes each run it was training for its views (they drop what they showed as live), in either order of the events; a dropped link does not', async () => {
    for (const goneFirst of [false, true]) {
      const live = aRunInfo({ runId: 'live', live: true, state: 'running' });
      const { host, model, events } = setup([live, aRunInfo({ runId: 'done' })], { live: aRunStatus(live) });
      await model.reload();
      events.run.length = 0;
      if (goneFirst) {
        host.disconnect(true); // the process exited before the socket closed
      } else {
        host.disconnect(); // the socket closed first: "reconnecting" for a moment
        assert.deepEqual(ids(events.run), [], 'a link being restored keeps what the views show');
        host.health.set({ kind: 'none' });
      }
      assert.deepEqual([...new Set(ids(events.run))], ['live']);
      assert.equal(events.run.at(-1)?.info.live, false);
    }
  });
});

describe('run states', () => {
  const active = ['starting', 'running', 'pausing', 'paused', 'stopping'] as const;
  const settled = ['created', 'stopped', 'interrupted', 'finished', 'failed'] as const;

  it('only a training host moves a run out of starting, running, pausing, paused and stopping', () => {
    for (const state of active) {
      assert.equal(inActiveState(aRunInfo({ state })), true, state);
      assert.equal(isActive(aRunInfo({ state, live: true })), true, state);
      assert.equal(isActive(aRunInfo({ state, live: false })), false, `${state}, not live`);
    }
    for (const state of settled) {
      assert.equal(inActiveState(aRunInfo({ state })), false, state);
      assert.equal(isActive(aRunInfo({ state, live: true })), false, state);
    }
  });

  it('reads the latest return only when it is a number', () => {
    assert.equal(latestReturn(null), undefined);
    assert.equal(latestReturn(aMetricsRecord({ 'rollout/return': 0.5 })), 0.5);
    assert.equal(latestReturn(aMetricsRecord({ 'rollout/return': null })), undefined);
  });
});

// Which run is live and which is current, as one host trains runs one after another. The
// notifications are the host's own sequence (host/empo2/server/runs/run_manager.py): run.start answers
// `starting`, run/state says `running`, and the end comes in a run/state that still says
// `live: true` (the host lets go of the run just after publishing it; nothing follows).

let seq = 0;

function trainAndFinish(host: FakeHost, runs: RunsModel, runId: string): void {
  const run = (fields: Partial<RunInfo>) =>
    aRunInfo({ runId, path: `/home/ada/project/.empo2/runs/${runId}`, iterations: 3, ...fields });
  runs.select(runs.absorbInfo(run({ state: 'starting', live: true, iteration: 0 })).info.runId);
  host.notify(Notifications.runState, { seq: ++seq, run: run({ state: 'running', live: true, iteration: 0 }) });
  host.notify(Notifications.runState, { seq: ++seq, run: run({ state: 'finished', live: true, iteration: 3 }) });
}

function aModel(): { host: FakeHost; runs: RunsModel } {
  const host = new FakeHost()
    .handle(Requests.runStatus, () => ({ run: null }))
    .handle(Requests.runList, () => ({ runs: [], roots: ['/home/ada/project/.empo2/runs'] }));
  return { host, runs: new RunsModel(host) };
}

describe('RunsModel: the live run once a run has ended', () => {
  it("a run that finished is not live, though the host's last run/state said live: true", () => {
    const { host, runs } = aModel();
    trainAndFinish(host, runs, 'run-a');
    trainAndFinish(host, runs, 'run-b');
    assert.equal(runs.live, undefined);
    assert.deepEqual(
      runs
        .list()
        .map((entry) => [entry.info.runId, entry.info.state, entry.info.live])
        .sort(),
      [
        ['run-a', 'finished', false],
        ['run-b', 'finished', false],
      ],
    );
    assert.deepEqual(host.violations, []);
  });

  it("after a comparison's runs trained, an opened run folder is current and no finished run is live", () => {
    const { host, runs } = aModel();
    trainAndFinish(host, runs, 'run-a');
    trainAndFinish(host, runs, 'run-b');
    // Open Run Folder: run.open's status, then select (src/runs/openRunFolder.ts).
    runs.select(
      runs.absorbInfo(
        aRunInfo({
          runId: 'synthetic-100k-metrics',
          path: '/home/ada/project/.empo2/runs/synthetic-100k-metrics',
          iteration: 100_000,
          iterations: 100_000,
        }),
      ).info.runId,
    );
    assert.equal(runs.current?.info.runId, 'synthetic-100k-metrics');
    // What Pause/Stop/Show Metrics fall back on: was run-a (the first run trained), not the current one.
    assert.equal(runs.live?.info.runId, undefined);
  });

  it('the run training now is live, not an earlier run the host finished', () => {
    const { host, runs } = aModel();
    trainAndFinish(host, runs, 'run-a');
    runs.absorbInfo(aRunInfo({ runId: 'run-b', state: 'starting', live: true, iteration: 0 }));
    host.notify(Notifications.runState, {
      seq: ++seq,
      run: aRunInfo({ runId: 'run-b', state: 'running', live: true, iteration: 1 }),
    });
    assert.equal(runs.live?.info.runId, 'run-b');
    assert.equal(runs.list()[0].info.runId, 'run-b');
  });

  it('a paused run stays live (the host holds it at its iteration boundary)', () => {
    const { host, runs } = aModel();
    runs.absorbInfo(aRunInfo({ runId: 'run-a', state: 'running', live: true }));
    host.notify(Notifications.runState, { seq: ++seq, run: aRunInfo({ runId: 'run-a', state: 'paused', live: true }) });
    assert.equal(runs.live?.info.runId, 'run-a');
  });

  it("reload after a reconnect reads the live run's status only for a run in a training state", async () => {
    const host = new FakeHost()
      .handle(Requests.runStatus, () => ({ run: null }))
      .handle(Requests.runList, () => ({
        runs: [aRunInfo({ runId: 'done', state: 'finished', live: true })],
        roots: ['/home/ada/project/.empo2/runs'],
      }));
    const runs = new RunsModel(host);
    await runs.reload();
    assert.equal(runs.live, undefined);
    assert.deepEqual(host.callsOf(Requests.runStatus.method), []);
  });
});
