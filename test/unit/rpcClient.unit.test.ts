import * as assert from 'node:assert/strict';
import { RpcClient, toCancellationToken } from '../../src/rpc/client';
import { ConnectionClosedError, RequestCancelledError, RequestTimeoutError, RpcError } from '../../src/rpc/errors';
import { Notifications, Requests } from '../../src/rpc/methods';
import { ErrorCodes } from '../../src/rpc/protocol';
import { FakeTransport } from '../builders/fakeTransport';
import { aRunInfo, aTip } from '../builders/protocol';
import { schemaErrors } from '../builders/schema';

function connect(options: { timeoutMs?: number } = {}) {
  const transport = new FakeTransport();
  const client = new RpcClient(transport, { defaultTimeoutMs: options.timeoutMs ?? 1_000 });
  return { transport, client };
}

describe('RpcClient', () => {
  it('sends JSON-RPC 2.0 requests with increasing ids and named params', async () => {
    const { transport, client } = connect();
    transport.onSend = (m) => transport.reply(m.id, m.method === 'ping' ? { time: 1 } : { runs: [], roots: [] });
    await client.request(Requests.ping, {});
    await client.request(Requests.runList, {});
    await client.request(Requests.ping, {});
    assert.deepEqual(transport.sent.map((m) => m.id), [1, 2, 3]);
    assert.deepEqual(transport.sent[1], { jsonrpc: '2.0', id: 2, method: 'run.list', params: {} });
    for (const message of transport.sent) {
      assert.deepEqual(schemaErrors('ClientMessage', message), []);
    }
  });

  it('resolves with the result of the response carrying its id, whatever the order', async () => {
    const { transport, client } = connect();
    const first = client.request(Requests.ping, {});
    const second = client.request(Requests.runStatus, { runId: 'run-1' });
    transport.reply(2, { run: null });
    transport.reply(1, { time: 42 });
    assert.deepEqual(await first, { time: 42 });
    assert.deepEqual(await second, { run: null });
  });

  it('turns an error response into an RpcError with the code, message and data', async () => {
    const { transport, client } = connect();
    const current = aTip({ version: 3, text: 'someone else\'s text' });
    transport.onSend = (m) => transport.fail(m.id, ErrorCodes.VersionConflict, 'tip t000001 is at version 3, not 2', { tip: current });
    const error = await client
      .request(Requests.memoryUpdate, { runId: 'run-1', tipId: 't000001', text: 'mine', expectedVersion: 2 })
      .catch((e: unknown) => e);
    assert.ok(error instanceof RpcError);
    assert.equal(error.code, ErrorCodes.VersionConflict);
    assert.equal(error.method, 'memory.update');
    assert.deepEqual(error.conflictingTip, current);
  });

  it('times out a request the host never answers, and drops the late answer', async () => {
    const { transport, client } = connect({ timeoutMs: 30 });
    const error = await client.request(Requests.ping, {}).catch((e: unknown) => e);
    assert.ok(error instanceof RequestTimeoutError);
    assert.equal(error.method, 'ping');
    transport.reply(1, { time: 1 }); // ignored, no throw
  });

  it('takes a per-request timeout', async () => {
    const { client } = connect({ timeoutMs: 10_000 });
    const started = Date.now();
    await assert.rejects(client.request(Requests.ping, {}, { timeoutMs: 20 }), RequestTimeoutError);
    assert.ok(Date.now() - started < 1_000);
  });

  it('cancels a request with a cancellation token (or an AbortSignal)', async () => {
    const { transport, client } = connect();
    const abort = new AbortController();
    const pending = client.request(Requests.trajectoryList, { runId: 'run-1' }, { token: toCancellationToken(abort.signal) });
    abort.abort();
    await assert.rejects(pending, RequestCancelledError);
    transport.reply(1, { items: [], nextCursor: null, total: 0 }); // late answer ignored
    await assert.rejects(client.request(Requests.ping, {}, { token: toCancellationToken(abort.signal) }), RequestCancelledError);
  });

  it('rejects every pending request when the connection closes, and later ones at once', async () => {
    const { transport, client } = connect();
    const closed: number[] = [];
    client.onDidClose(({ code }) => closed.push(code));
    const a = client.request(Requests.ping, {});
    const b = client.request(Requests.runList, {});
    transport.drop(1006, 'host went away');
    for (const pending of [a, b]) {
      const error = await pending.catch((e: unknown) => e);
      assert.ok(error instanceof ConnectionClosedError);
      assert.match(error.message, /host went away/);
    }
    assert.deepEqual(closed, [1006]);
    assert.equal(client.isClosed, true);
    await assert.rejects(client.request(Requests.ping, {}), ConnectionClosedError);
  });

  it('rejects pending requests when the client itself closes or is disposed', async () => {
    const { transport, client } = connect();
    const pending = client.request(Requests.ping, {});
    client.dispose();
    await assert.rejects(pending, ConnectionClosedError);
    assert.equal(transport.closed?.code, 1000);
  });

  it('dispatches notifications to typed listeners, in order', () => {
    const { transport, client } = connect();
    const states: string[] = [];
    const tips: number[] = [];
    client.on(Notifications.runState, ({ run, seq }) => states.push(`${seq}:${run.state}`));
    client.on(Notifications.memoryChanged, ({ changes }) => tips.push(changes.length));
    transport.notify('run/state', { seq: 1, run: aRunInfo({ state: 'starting', live: true }) });
    transport.notify('memory/changed', { seq: 2, runId: 'run-1', changes: [{ change: 'added', tip: aTip(), by: { kind: 'policy', name: 'policy' } }] });
    transport.notify('run/state', { seq: 3, run: aRunInfo({ state: 'running', live: true }) });
    assert.deepEqual(states, ['1:starting', '3:running']);
    assert.deepEqual(tips, [1]);
  });

  it('reports notifications it does not know and survives junk frames', () => {
    const { transport, client } = connect();
    const unknown: string[] = [];
    client.on(Notifications.runState, () => undefined);
    client.onUnknownNotification(({ method }) => unknown.push(method));
    transport.receive('not json {');
    transport.receive('[1, 2]');
    transport.receive({ jsonrpc: '2.0', id: null, error: { code: -32700, message: 'parse error' } });
    transport.notify('future/thing', { seq: 9 });
    assert.deepEqual(unknown, ['future/thing']);
  });

  it('stops notifying a listener once its subscription is disposed', () => {
    const { transport, client } = connect();
    let count = 0;
    const subscription = client.on(Notifications.hostResync, () => count++);
    transport.notify('host/resync', { seq: 1, reason: 'slow', dropped: 3 });
    subscription.dispose();
    transport.notify('host/resync', { seq: 2, reason: 'slow', dropped: 3 });
    assert.equal(count, 1);
  });
});
