import * as assert from 'node:assert/strict';
import { ConnectionClosedError, RpcError } from '../../src/rpc/errors';
import { Notifications, Requests } from '../../src/rpc/methods';
import { ErrorCodes, type MemoryListParams, type MemoryUpdateParams, type Tip } from '../../src/rpc/protocol';
import { RunsModel } from '../../src/runs/runsModel';
import { TipsModel, type TipsChange } from '../../src/tips/tipsModel';
import { FakeHost } from '../builders/fakeHost';
import { aRunInfo, aTip } from '../builders/protocol';

function setup(tips: Tip[]) {
  const store = new Map(tips.map((t) => [t.id, t]));
  const host = new FakeHost()
    .handle(Requests.runList, () => ({ runs: [aRunInfo()], roots: ['/tmp/runs'] }))
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

  it('applies memory/changed for its run: tips the policy writes appear, deleted ones leave', async () => {
    const { runs, model, host, changes } = setup([aTip()]);
    await runs.reload();
    await model.whenLoaded();
    host.notify(Notifications.memoryChanged, {
      seq: 9,
      runId: 'run-1',
      changes: [
        { change: 'added', tip: aTip({ id: 't000002', text: 'new' }), by: { kind: 'policy', name: 'policy' } },
        { change: 'deleted', tip: aTip({ deleted: true, version: 2 }), by: { kind: 'person', name: 'bob', connection: 2 } },
      ],
    });
    host.notify(Notifications.memoryChanged, { seq: 10, runId: 'other-run', changes: [{ change: 'added', tip: aTip({ id: 't000009' }), by: { kind: 'policy', name: 'policy' } }] });
    assert.deepEqual(model.list().map((t) => t.id), ['t000002']);
    assert.equal(changes.filter((c) => c.kind === 'changes').length, 1);
  });

  it('keeps deleted tips findable: loaded with includeDeleted, kept when deleted live, never offered as live', async () => {
    const { runs, model, host } = setup([aTip({ id: 't000001' }), aTip({ id: 't000002', deleted: true, version: 2 })]);
    await runs.reload();
    await model.whenLoaded();
    assert.equal((host.callsOf('memory.list')[0] as MemoryListParams).filter?.includeDeleted, true);
    assert.deepEqual(model.list().map((t) => t.id), ['t000001']);
    assert.deepEqual(model.list({ includeDeleted: true }).map((t) => t.id), ['t000001', 't000002']);
    assert.equal(model.get('t000002'), undefined, 'a deleted tip cannot be edited');
    assert.equal(model.find('t000002')?.deleted, true, 'but it can be found, and its history read');
    host.notify(Notifications.memoryChanged, {
      seq: 3,
      runId: 'run-1',
      changes: [{ change: 'deleted', tip: aTip({ id: 't000001', version: 2 }), by: { kind: 'person', name: 'bob' } }],
    });
    assert.deepEqual(model.list().map((t) => t.id), []);
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
    assert.deepEqual(conflict.kind === 'conflict' && [conflict.attempted, conflict.current.text, conflict.current.version], ['mine again', 'theirs', 3]);
    assert.equal(model.get('t000001')?.text, 'theirs', 'the list shows the current tip');
  });

  it('never goes back to an older version when a notification and a response cross', async () => {
    const { runs, model, host } = setup([aTip({ version: 4, text: 'v4' })]);
    await runs.reload();
    await model.whenLoaded();
    host.notify(Notifications.memoryChanged, { seq: 3, runId: 'run-1', changes: [{ change: 'updated', tip: aTip({ version: 3, text: 'v3' }), by: { kind: 'person', name: 'x' } }] });
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
    const outcome = await model.update({ tipId: 't000001', text: 'Open the shed first.', expectedVersion: 1, editId: 'edit-42' });
    assert.deepEqual(seen.map((p) => (p as { editId: string }).editId), ['edit-42', 'edit-42']);
    assert.equal(outcome.kind, 'saved');
    assert.ok(outcome.kind === 'saved' && outcome.replayed && outcome.tip.version === 2);
    assert.equal(model.get('t000001')?.text, 'Open the shed first.');
    assert.deepEqual(host.violations, []);
  });
});
