import * as assert from 'node:assert/strict';
import { ConnectionClosedError, RpcError } from '../../src/rpc/errors';
import { Notifications, Requests } from '../../src/rpc/methods';
import {
  ErrorCodes,
  type MemoryAddParams,
  type MemoryDeleteParams,
  type MemoryListParams,
  type MemoryUpdateParams,
  type Tip,
} from '../../src/rpc/protocol';
import { RunsModel } from '../../src/runs/runsModel';
import { TipsModel, type TipsChange } from '../../src/tips/tipsModel';
import { FakeHost } from '../builders/fakeHost';
import { aRunInfo, aTip, aTipVersion } from '../builders/protocol';
import { schemaErrors } from '../builders/schema';

function setup(tips: Tip[]) {
  const store = new Map(tips.map((t) => [t.id, t]));
  const host = new FakeHost()
    .handle(Requests.runList, () => ({ runs: [aRunInfo()], roots: ['/home/ada/project/.empo2/runs'] }))
    .handle(Requests.runStatus, () => ({ run: null }))
    .handle(Requests.memoryList, ({ cursor, limit, filter }) => {
      // As the host: deleted tips only when asked for (memory.list filter.includeDeleted).
      const all = [...store.values()].filter((t) => filter?.includeDeleted || !t.deleted);
      const start = cursor ? Number(cursor.slice(1)) : 0;
      const items = all.slice(start, start + (limit ?? 100));
      const end = start + items.length;
      return { items, nextCursor: end < all.length ? `o${end}` : null, total: all.length };
    })
    .handle(Requests.memoryUpdate, ({ tipId, text, expectedVersion }: MemoryUpdateParams) => {
      const tip = store.get(tipId)!;
      if (tip.version !== expectedVersion) {
        throw new RpcError('memory.update', ErrorCodes.VersionConflict, 'stale', { tip });
      }
      const next = { ...tip, text, version: tip.version + 1, author: tip.author };
      store.set(tipId, next);
      return { tip: next };
    });
  const runs = new RunsModel(host);
  const model = new TipsModel(host, runs);
  const changes: TipsChange[] = [];
  model.onDidChange((change) => changes.push(change));
  return { host, runs, model, store, changes };
}

describe('TipsModel', () => {
  it('loads every tip of the current run, following cursors', async () => {
    const tips = Array.from({ length: 2_500 }, (_, i) => aTip({ id: `t${String(i).padStart(6, '0')}` }));
    const { runs, model, host } = setup(tips);
    await runs.reload();
    await model.whenLoaded();
    assert.equal(model.currentRunId, 'run-1');
    assert.equal(model.list().length, 2_500);
    assert.equal(host.callsOf('memory.list').length, 3);
    assert.deepEqual(host.violations, []);
  });

  it('reads the tips again when its run starts running: a resume cut the memory back to the checkpoint', async () => {
    // A restarted host: the list read at the reconnect still holds the tips of the iteration the
    // resume then rolls back (no memory/changed says which tips went).
    const { runs, model, host, store } = setup([aTip({ id: 't000001' }), aTip({ id: 't000002' })]);
    await runs.reload();
    await model.whenLoaded();
    assert.deepEqual(
      model.list().map((t) => t.id),
      ['t000001', 't000002'],
    );
    host.notify(Notifications.runState, { seq: 1, run: aRunInfo({ state: 'starting', live: true, updated: 2 }) });
    store.delete('t000002');
    host.notify(Notifications.runState, { seq: 2, run: aRunInfo({ state: 'running', live: true, updated: 3 }) });
    await model.whenLoaded();
    assert.deepEqual(
      model.list().map((t) => t.id),
      ['t000001'],
    );
    // Progress of the same running run reads nothing again.
    const reads = host.callsOf('memory.list').length;
    host.notify(Notifications.runState, {
      seq: 3,
      run: aRunInfo({ state: 'running', live: true, iteration: 3, updated: 4 }),
    });
    await model.whenLoaded();
    assert.equal(host.callsOf('memory.list').length, reads);
  });

  it('applies memory/changed for its run: tips the policy writes appear, deleted ones leave', async () => {
    const { runs, model, host, changes } = setup([aTip()]);
    await runs.reload();
    await model.whenLoaded();
    host.notify(Notifications.memoryChanged, {
      seq: 9,
      runId: 'run-1',
      changes: [
        { change: 'added', tip: aTip({ id: 't000002', text: 'new' }), by: { kind: 'policy', name: 'policy' } },
        {
          change: 'deleted',
          tip: aTip({ deleted: true, version: 2 }),
          by: { kind: 'person', name: 'bob', connection: 2 },
        },
      ],
    });
    host.notify(Notifications.memoryChanged, {
      seq: 10,
      runId: 'other-run',
      changes: [{ change: 'added', tip: aTip({ id: 't000009' }), by: { kind: 'policy', name: 'policy' } }],
    });
    assert.deepEqual(
      model.list().map((t) => t.id),
      ['t000002'],
    );
    assert.equal(changes.filter((c) => c.kind === 'changes').length, 1);
  });

  it('keeps deleted tips findable: loaded with includeDeleted, kept when deleted live, never offered as live', async () => {
    const { runs, model, host } = setup([aTip({ id: 't000001' }), aTip({ id: 't000002', deleted: true, version: 2 })]);
    await runs.reload();
    await model.whenLoaded();
    assert.equal((host.callsOf('memory.list')[0] as MemoryListParams).filter?.includeDeleted, true);
    assert.deepEqual(
      model.list().map((t) => t.id),
      ['t000001'],
    );
    assert.deepEqual(
      model.list({ includeDeleted: true }).map((t) => t.id),
      ['t000001', 't000002'],
    );
    assert.equal(model.get('t000002'), undefined, 'a deleted tip cannot be edited');
    assert.equal(model.find('t000002')?.deleted, true, 'but it can be found, and its history read');
    host.notify(Notifications.memoryChanged, {
      seq: 3,
      runId: 'run-1',
      changes: [{ change: 'deleted', tip: aTip({ id: 't000001', version: 2 }), by: { kind: 'person', name: 'bob' } }],
    });
    assert.deepEqual(
      model.list().map((t) => t.id),
      [],
    );
    assert.equal(model.find('t000001')?.deleted, true);
  });

  it('saves an edit with the version read, and returns a conflict (both texts) when it is stale', async () => {
    const { runs, model, store } = setup([aTip({ version: 1 })]);
    await runs.reload();
    await model.whenLoaded();
    const saved = await model.update({ tipId: 't000001', text: 'mine', expectedVersion: 1 });
    assert.equal(saved.kind, 'saved');
    assert.equal(model.get('t000001')?.version, 2);
    store.set('t000001', { ...store.get('t000001')!, text: 'theirs', version: 3 });
    const conflict = await model.update({ tipId: 't000001', text: 'mine again', expectedVersion: 2 });
    assert.deepEqual(
      conflict.kind === 'conflict' && [conflict.attempted, conflict.current.text, conflict.current.version],
      ['mine again', 'theirs', 3],
    );
    assert.equal(model.get('t000001')?.text, 'theirs', 'the list shows the current tip');
  });

  it('never goes back to an older version when a notification and a response cross', async () => {
    const { runs, model, host } = setup([aTip({ version: 4, text: 'v4' })]);
    await runs.reload();
    await model.whenLoaded();
    host.notify(Notifications.memoryChanged, {
      seq: 3,
      runId: 'run-1',
      changes: [{ change: 'updated', tip: aTip({ version: 3, text: 'v3' }), by: { kind: 'person', name: 'x' } }],
    });
    assert.equal(model.get('t000001')?.text, 'v4');
  });

  it('keeps its tips while the link is down, reloads on reconnect, and empties when the host is stopped', async () => {
    const { runs, model, host } = setup([aTip()]);
    await runs.reload();
    await model.whenLoaded();
    host.disconnect(); // the link dropped: reconnecting
    assert.equal(model.list().length, 1, 'no tip vanishes while reconnecting');
    host.connect();
    await new Promise((resolve) => setImmediate(resolve));
    await model.whenLoaded();
    assert.equal(model.list().length, 1);
    host.disconnect();
    host.health.set({ kind: 'none' }); // stopped on purpose
    assert.equal(model.list().length, 0);
  });

  it('sends a save again with the same edit id after the link dropped, and reports what the host recorded', async () => {
    const { runs, model, host } = setup([aTip()]);
    await runs.reload();
    await model.whenLoaded();
    const seen: unknown[] = [];
    host.handle(Requests.memoryUpdate, (params) => {
      seen.push(params);
      if (seen.length === 1) {
        host.disconnect(); // applied on the host, but the answer is lost with the link
        setTimeout(() => host.connect(), 10);
        throw new ConnectionClosedError('memory.update', 'the link broke');
      }
      return { tip: aTip({ version: 2, text: 'Open the shed first.' }), replayed: true };
    });
    const outcome = await model.update({
      tipId: 't000001',
      text: 'Open the shed first.',
      expectedVersion: 1,
      editId: 'edit-42',
    });
    assert.deepEqual(
      seen.map((p) => (p as { editId: string }).editId),
      ['edit-42', 'edit-42'],
    );
    assert.equal(outcome.kind, 'saved');
    assert.ok(outcome.kind === 'saved' && outcome.replayed && outcome.tip.version === 2);
    assert.equal(model.get('t000001')?.text, 'Open the shed first.');
    assert.deepEqual(host.violations, []);
  });
});

/** Two runs, `a` (current: updated last) and `b`, each with its own tips; every memory request answered. */
function twoRuns(
  tipsOf: Record<string, Tip[]> = { a: [aTip({ id: 'ta', variationKey: 'power-device/1' })], b: [aTip({ id: 'tb' })] },
) {
  const host = new FakeHost()
    .handle(Requests.runList, () => ({
      runs: [aRunInfo({ runId: 'a', updated: 2 }), aRunInfo({ runId: 'b', updated: 1 })],
      roots: ['/home/ada/project/.empo2/runs'],
    }))
    .handle(Requests.runStatus, () => ({ run: null }))
    .handle(Requests.memoryList, ({ runId }) => ({
      items: tipsOf[runId] ?? [],
      nextCursor: null,
      total: (tipsOf[runId] ?? []).length,
    }))
    .handle(Requests.memoryAdd, ({ text, variationKey }: MemoryAddParams) => ({
      tip: aTip({ id: 't000100', text, variationKey }),
    }))
    .handle(Requests.memoryDelete, ({ tipId, expectedVersion }: MemoryDeleteParams) => ({
      tip: aTip({ id: tipId, version: expectedVersion + 1, deleted: true }),
    }))
    .handle(Requests.memoryHistory, () => ({
      versions: [aTipVersion(), aTipVersion({ version: 2, kind: 'update', text: 'look in the shed first' })],
    }));
  const runs = new RunsModel(host);
  const model = new TipsModel(host, runs);
  const changes: TipsChange[] = [];
  model.onDidChange((change) => changes.push(change));
  return { host, runs, model, changes };
}

const settle = () => new Promise((resolve) => setImmediate(resolve));

describe('TipsModel, following the current run and editing', () => {
  it("shows the tips of the current run, and another run's when that one becomes current", async () => {
    const { runs, model, changes } = twoRuns();
    await runs.reload();
    await model.whenLoaded();
    assert.equal(model.currentRunId, 'a');
    assert.deepEqual(
      model.list().map((t) => t.id),
      ['ta'],
    );
    runs.select('b');
    await model.whenLoaded();
    assert.equal(model.currentRunId, 'b');
    assert.deepEqual(
      model.list().map((t) => t.id),
      ['tb'],
    );
    assert.deepEqual(
      changes.map((c) => [c.kind, c.runId, c.kind === 'reset' && c.tips.map((t) => t.id)]),
      [
        ['reset', 'a', ['ta']],
        ['reset', 'b', ['tb']],
      ],
    );
  });

  it('does not load again when the current run changes only its state', async () => {
    const { host, runs, model } = twoRuns();
    await runs.reload();
    await model.whenLoaded();
    host.notify(Notifications.runState, { seq: 1, run: aRunInfo({ runId: 'a', updated: 2, state: 'stopped' }) });
    await model.whenLoaded();
    assert.equal(host.callsOf('memory.list').length, 1);
  });

  it('drops a load that a change of run overtook', async () => {
    const { host, runs, model, changes } = twoRuns();
    let release: (() => void) | undefined;
    host.handle(Requests.memoryList, ({ runId }) =>
      runId === 'a'
        ? new Promise(
            (resolve) => (release = () => resolve({ items: [aTip({ id: 'ta' })], nextCursor: null, total: 1 })),
          )
        : { items: [aTip({ id: 'tb' })], nextCursor: null, total: 1 },
    );
    await runs.reload(); // starts loading a's tips
    await settle();
    runs.select('b');
    await model.whenLoaded();
    release!();
    await settle();
    assert.equal(model.currentRunId, 'b');
    assert.deepEqual(
      model.list().map((t) => t.id),
      ['tb'],
    );
    assert.deepEqual(
      changes.map((c) => c.runId),
      ['b'],
      'no reset for the run left',
    );
  });

  it('says why tips could not be loaded, and forgets it when a load works', async () => {
    const { host, runs, model, changes } = twoRuns();
    host.handle(Requests.memoryList, () => {
      throw new Error('the memory store is locked');
    });
    await runs.reload();
    await model.whenLoaded();
    assert.equal(model.error, 'the memory store is locked');
    assert.deepEqual(model.list(), []);
    assert.equal(changes.length, 1, 'a reset is fired either way');
    host.handle(Requests.memoryList, () => ({ items: [aTip()], nextCursor: null, total: 1 }));
    await model.load('a');
    assert.equal(model.error, undefined);
    assert.equal(model.list().length, 1);
  });

  it('keeps the error of the run it is about, not of one left meanwhile', async () => {
    const { host, runs, model } = twoRuns();
    let fail: (() => void) | undefined;
    host.handle(Requests.memoryList, ({ runId }) =>
      runId === 'a'
        ? new Promise((_, reject) => (fail = () => reject(new Error('a is broken'))))
        : { items: [], nextCursor: null, total: 0 },
    );
    await runs.reload();
    await settle();
    runs.select('b');
    await model.whenLoaded();
    fail!();
    await settle();
    assert.equal(model.error, undefined);
  });

  it('empties the list with no run, and with no host unless the link is only down', async () => {
    const { host, runs, model, changes } = twoRuns();
    await runs.reload();
    await model.whenLoaded();
    await model.load(undefined);
    assert.deepEqual(model.list(), []);
    assert.deepEqual(changes[changes.length - 1], { kind: 'reset', runId: undefined, tips: [] });
    await model.load('a');
    host.disconnect(); // reconnecting: the same run's tips stay on show
    await model.load('a');
    assert.deepEqual(
      model.list().map((t) => t.id),
      ['ta'],
    );
    await model.load('b'); // another run while no host is there: nothing to show
    assert.deepEqual(model.list(), []);
    assert.equal(host.callsOf('memory.list').length, 2);
  });

  it('tells a stopped host once, and keeps its tips when the link is only down', async () => {
    const { host, runs, model, changes } = twoRuns();
    await runs.reload();
    await model.whenLoaded();
    changes.length = 0;
    host.disconnect();
    assert.deepEqual(changes, []);
    host.health.set({ kind: 'none' });
    host.health.set({ kind: 'none' });
    assert.deepEqual(changes, [{ kind: 'reset', runId: 'a', tips: [] }]);
  });

  it('lists at most 20,000 tips, in pages of 1,000', async () => {
    const tips = Array.from({ length: 20_500 }, (_, i) => aTip({ id: `t${String(i).padStart(6, '0')}` }));
    const { runs, model, host } = setup(tips);
    await runs.reload();
    await model.whenLoaded();
    assert.equal(model.list().length, 20_000);
    const pages = host.callsOf('memory.list') as MemoryListParams[];
    assert.equal(pages.length, 20);
    assert.ok(pages.every((page) => page.limit === 1_000 && page.runId === 'run-1'));
    assert.equal(pages[0].cursor, undefined, 'the first page has no cursor');
    assert.equal(pages[1].cursor, 'o1000');
  });

  it('offers as variations the configured tasks and those with live tips, sorted, once each', async () => {
    const { runs, model } = twoRuns({
      a: [
        aTip({ id: 't1', variationKey: 'grow-plant/2' }),
        aTip({ id: 't2', variationKey: 'power-device/0' }),
        aTip({ id: 't3', variationKey: 'gone/0', deleted: true }),
      ],
    });
    await runs.reload();
    await model.whenLoaded();
    assert.deepEqual(model.variations(['power-device/0', 'boil-water/1']), [
      'boil-water/1',
      'grow-plant/2',
      'power-device/0',
    ]);
    assert.deepEqual(model.variations(), ['grow-plant/2', 'power-device/0']);
  });

  it('adds a tip, naming the author and edit id only when there are some, and shows it at once', async () => {
    const { host, runs, model, changes } = twoRuns();
    await runs.reload();
    await model.whenLoaded();
    const tip = await model.add('power-device/3', 'the fuse box is in the cellar');
    assert.deepEqual(host.callsOf('memory.add'), [
      { runId: 'a', variationKey: 'power-device/3', text: 'the fuse box is in the cellar' },
    ]);
    assert.equal(model.get(tip.id)?.text, 'the fuse box is in the cellar');
    assert.deepEqual(changes[changes.length - 1], {
      kind: 'changes',
      runId: 'a',
      changes: [{ change: 'added', tip, by: { kind: 'person', name: '' } }],
    });
    await model.add('power-device/3', 'again', 'ada', 'edit-7');
    assert.deepEqual(host.callsOf('memory.add')[1], {
      runId: 'a',
      variationKey: 'power-device/3',
      text: 'again',
      author: 'ada',
      editId: 'edit-7',
    });
    assert.deepEqual(changes[changes.length - 1].kind === 'changes' && changes[changes.length - 1], {
      kind: 'changes',
      runId: 'a',
      changes: [{ change: 'added', tip: model.get('t000100'), by: { kind: 'person', name: 'ada' } }],
    });
    assert.deepEqual(host.violations, []);
  });

  it('sends an add with an edit id again after the link dropped, and once without one', async () => {
    const { host, runs, model } = twoRuns();
    await runs.reload();
    await model.whenLoaded();
    let attempts = 0;
    host.handle(Requests.memoryAdd, ({ text }: MemoryAddParams) => {
      if (++attempts === 1) {
        host.disconnect();
        setTimeout(() => host.connect(), 10);
        throw new ConnectionClosedError('memory.add', 'the link broke');
      }
      return { tip: aTip({ id: 't000101', text }) };
    });
    await model.add('power-device/0', 'kept', undefined, 'edit-1');
    assert.equal(attempts, 2);
    attempts = 0;
    await assert.rejects(model.add('power-device/0', 'lost'), ConnectionClosedError);
    assert.equal(attempts, 1, 'without an edit id a second send could add it twice');
  });

  it('deletes with a fresh edit id each time and the author when known; the tip stays findable', async () => {
    const { host, runs, model, changes } = twoRuns();
    await runs.reload();
    await model.whenLoaded();
    const outcome = await model.delete({ tipId: 'ta', expectedVersion: 1 });
    assert.deepEqual(
      outcome,
      { kind: 'saved', tip: aTip({ id: 'ta', version: 2, deleted: true }) },
      'not replayed: no flag',
    );
    assert.equal(model.get('ta'), undefined);
    assert.equal(model.find('ta')?.deleted, true);
    assert.deepEqual(changes[changes.length - 1], {
      kind: 'changes',
      runId: 'a',
      changes: [{ change: 'deleted', tip: outcome.kind === 'saved' && outcome.tip, by: { kind: 'person', name: '' } }],
    });
    await model.delete({ tipId: 'ta', expectedVersion: 2 }, 'ada');
    const [first, second] = host.callsOf('memory.delete') as MemoryDeleteParams[];
    assert.match(first.editId ?? '', /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    assert.notEqual(first.editId, second.editId);
    assert.equal(first.author, undefined);
    assert.equal(second.author, 'ada');
    assert.deepEqual(host.violations, []);
  });

  it('passes on an error that is not a conflict, and a conflict without the current tip', async () => {
    const { host, runs, model } = twoRuns();
    await runs.reload();
    await model.whenLoaded();
    host.handle(Requests.memoryUpdate, () => {
      throw new RpcError('memory.update', ErrorCodes.TipNotFound, 'no tip ta');
    });
    await assert.rejects(model.update({ tipId: 'ta', text: 'x', expectedVersion: 1 }), /no tip ta/);
    host.handle(Requests.memoryUpdate, () => {
      throw new RpcError('memory.update', ErrorCodes.VersionConflict, 'stale');
    });
    await assert.rejects(model.update({ tipId: 'ta', text: 'x', expectedVersion: 1 }), /stale/);
    assert.equal(model.get('ta')?.version, 1);
  });

  it('names the author of an update only when known', async () => {
    const { host, runs, model } = twoRuns();
    host.handle(Requests.memoryUpdate, ({ tipId, text, expectedVersion }: MemoryUpdateParams) => ({
      tip: aTip({ id: tipId, text, version: expectedVersion + 1 }),
    }));
    await runs.reload();
    await model.whenLoaded();
    await model.update({ tipId: 'ta', text: 'one', expectedVersion: 1 });
    await model.update({ tipId: 'ta', text: 'two', expectedVersion: 2 }, 'ada');
    assert.deepEqual(host.callsOf('memory.update'), [
      { runId: 'a', tipId: 'ta', text: 'one', expectedVersion: 1 },
      { runId: 'a', tipId: 'ta', text: 'two', expectedVersion: 2, author: 'ada' },
    ]);
  });

  it("reads a tip's history from the current run", async () => {
    const { host, runs, model } = twoRuns();
    await runs.reload();
    await model.whenLoaded();
    const versions = await model.history('ta');
    assert.deepEqual(
      versions.map((v) => v.version),
      [1, 2],
    );
    assert.deepEqual(host.callsOf('memory.history'), [{ runId: 'a', tipId: 'ta' }]);
  });

  it('refuses every edit while no run is open', async () => {
    const { model } = twoRuns();
    const noRun = /no run is open; start or open a run first/;
    await assert.rejects(model.add('power-device/0', 'x'), noRun);
    await assert.rejects(model.update({ tipId: 'ta', text: 'x', expectedVersion: 1 }), noRun);
    await assert.rejects(model.delete({ tipId: 'ta', expectedVersion: 1 }), noRun);
    await assert.rejects(model.history('ta'), noRun);
  });

  it('clears the list when the host no longer lists any run', async () => {
    const { host, runs, model, changes } = twoRuns();
    await runs.reload();
    await model.whenLoaded();
    host.handle(Requests.runList, () => ({ runs: [], roots: ['/home/ada/project/.empo2/runs'] }));
    await runs.reload();
    assert.equal(model.currentRunId, undefined);
    assert.deepEqual(model.list(), []);
    assert.deepEqual(changes[changes.length - 1], { kind: 'reset', runId: undefined, tips: [] });
  });

  it('reads the tips again when a host connects (tips written meanwhile appear), and with no run reads nothing', async () => {
    const tipsOf = { a: [aTip({ id: 'ta' })], b: [] };
    const { host, model } = twoRuns(tipsOf);
    host.connect(); // no run listed yet
    await settle();
    await model.whenLoaded();
    assert.equal(model.currentRunId, 'a', 'the runs model listed the runs on connect');
    tipsOf.a.push(aTip({ id: 'tb', text: 'written while the link was down' }));
    host.connect();
    await settle();
    await model.whenLoaded();
    assert.deepEqual(
      model.list().map((t) => t.id),
      ['ta', 'tb'],
    );
    const empty = new FakeHost().handle(Requests.runList, () => ({
      runs: [],
      roots: ['/home/ada/project/.empo2/runs'],
    }));
    const noRuns = new TipsModel(empty, new RunsModel(empty));
    assert.doesNotThrow(() => empty.connect());
    assert.equal(noRuns.currentRunId, undefined);
    assert.deepEqual(empty.callsOf('memory.list'), []);
  });

  it('answers undefined for a tip it does not have', async () => {
    const { runs, model } = twoRuns();
    await runs.reload();
    await model.whenLoaded();
    assert.equal(model.get('t999999'), undefined);
    assert.equal(model.find('t999999'), undefined);
  });

  it('hands the views deleted tips too on every reset, also while reconnecting', async () => {
    const { host, runs, model, changes } = twoRuns({
      a: [aTip({ id: 'live' }), aTip({ id: 'gone', deleted: true, version: 2 })],
    });
    await runs.reload();
    await model.whenLoaded();
    const resetIds = () => {
      const last = changes[changes.length - 1];
      return last.kind === 'reset' ? last.tips.map((t) => t.id) : [];
    };
    assert.deepEqual(resetIds(), ['live', 'gone']);
    host.disconnect();
    await model.load('a');
    assert.deepEqual(resetIds(), ['live', 'gone']);
  });

  it('reports every change it makes as a valid memory change, a conflict as the tip now is', async () => {
    const { host, runs, model, changes } = twoRuns();
    await runs.reload();
    await model.whenLoaded();
    const tipNow = aTip({ id: 'ta', version: 5, text: 'theirs' });
    host.handle(Requests.memoryUpdate, ({ tipId, text, expectedVersion }: MemoryUpdateParams) => {
      if (text === 'stale') {
        throw new RpcError('memory.update', ErrorCodes.VersionConflict, 'stale', { tip: tipNow });
      }
      return { tip: aTip({ id: tipId, text, version: expectedVersion + 1 }) };
    });
    changes.length = 0;
    await model.add('power-device/0', 'new');
    await model.update({ tipId: 'ta', text: 'mine', expectedVersion: 1 });
    await model.update({ tipId: 'ta', text: 'stale', expectedVersion: 1 });
    await model.delete({ tipId: 'ta', expectedVersion: 5 });
    const reported = changes.flatMap((c) => (c.kind === 'changes' ? c.changes : []));
    assert.deepEqual(
      reported.map((c) => [c.change, c.tip.id, c.tip.version]),
      [
        ['added', 't000100', 1],
        ['updated', 'ta', 2],
        ['updated', 'ta', 5],
        ['deleted', 'ta', 6],
      ],
    );
    assert.deepEqual(
      reported.flatMap((c) => schemaErrors('MemoryChange', c)),
      [],
    );
  });

  it('returns a conflict on a stale delete, with nothing attempted but the deletion', async () => {
    const { host, runs, model } = twoRuns();
    await runs.reload();
    await model.whenLoaded();
    const tipNow = aTip({ id: 'ta', version: 3, text: 'theirs' });
    host.handle(Requests.memoryDelete, () => {
      throw new RpcError('memory.delete', ErrorCodes.VersionConflict, 'stale', { tip: tipNow });
    });
    assert.deepEqual(await model.delete({ tipId: 'ta', expectedVersion: 1 }), {
      kind: 'conflict',
      current: tipNow,
      attempted: '',
    });
    assert.equal(model.get('ta')?.text, 'theirs');
  });
});
