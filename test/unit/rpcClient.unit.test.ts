import * as assert from 'node:assert/strict';
import {
  RpcClient,
  toCancellationToken,
  type CancellationToken,
  type CloseInfo,
  type Direction,
} from '../../src/rpc/client';
import { ConnectionClosedError, RequestCancelledError, RequestTimeoutError, RpcError } from '../../src/rpc/errors';
import { Notifications, Requests } from '../../src/rpc/methods';
import { ErrorCodes } from '../../src/rpc/protocol';
import { FakeTransport } from '../builders/fakeTransport';
import { aRunInfo, aTip } from '../builders/protocol';
import { schemaErrors } from '../builders/schema';

/** A transport like a real socket's: close() starts the closing handshake; onClose fires later (reportClose). */
class LateClosingTransport extends FakeTransport {
  readonly closeCalls: CloseInfo[] = [];

  override close(code = 1000, reason = ''): void {
    this.closeCalls.push({ code, reason });
  }

  reportClose(): void {
    const last = this.closeCalls[this.closeCalls.length - 1];
    this.drop(last?.code, last?.reason);
  }
}

/** A cancellation token that counts its subscriptions and their disposals, and can cancel. */
function aToken(options: { canUnsubscribe?: boolean } = {}) {
  const listeners: Array<() => void> = [];
  const counts = { subscribed: 0, disposed: 0 };
  const token: CancellationToken = {
    isCancellationRequested: false,
    onCancellationRequested(listener) {
      counts.subscribed++;
      listeners.push(listener);
      return {
        dispose() {
          counts.disposed++;
          if (options.canUnsubscribe !== false) {
            listeners.splice(listeners.indexOf(listener), 1);
          }
        },
      };
    },
  };
  return { token, counts, cancel: () => [...listeners].forEach((listener) => listener()) };
}

const timers = () => process.getActiveResourcesInfo().filter((kind) => kind === 'Timeout').length;

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
    assert.deepEqual(
      transport.sent.map((m) => m.id),
      [1, 2, 3],
    );
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
    const current = aTip({ version: 3, text: "someone else's text" });
    transport.onSend = (m) =>
      transport.fail(m.id, ErrorCodes.VersionConflict, 'tip t000001 is at version 3, not 2', { tip: current });
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
    const pending = client.request(
      Requests.trajectoryList,
      { runId: 'run-1' },
      { token: toCancellationToken(abort.signal) },
    );
    abort.abort();
    await assert.rejects(pending, RequestCancelledError);
    transport.reply(1, { items: [], nextCursor: null, total: 0 }); // late answer ignored
    await assert.rejects(
      client.request(Requests.ping, {}, { token: toCancellationToken(abort.signal) }),
      RequestCancelledError,
    );
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
    await assert.rejects(
      pending,
      (error: unknown) => error instanceof ConnectionClosedError && /\(the client was disposed\)/.test(error.message),
    );
    assert.equal(transport.closed?.code, 1000);
  });

  it('dispatches notifications to typed listeners, in order', () => {
    const { transport, client } = connect();
    const states: string[] = [];
    const tips: number[] = [];
    client.on(Notifications.runState, ({ run, seq }) => states.push(`${seq}:${run.state}`));
    client.on(Notifications.memoryChanged, ({ changes }) => tips.push(changes.length));
    transport.notify('run/state', { seq: 1, run: aRunInfo({ state: 'starting', live: true }) });
    transport.notify('memory/changed', {
      seq: 2,
      runId: 'run-1',
      changes: [{ change: 'added', tip: aTip(), by: { kind: 'policy', name: 'policy' } }],
    });
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

  it('says the close code when the connection closes without a reason', async () => {
    const { transport, client } = connect();
    const pending = client.request(Requests.ping, {});
    transport.drop(1006, '');
    await assert.rejects(pending, /\(code 1006\)/);
    await assert.rejects(client.request(Requests.ping, {}), /\(code 1006\)/);
  });

  it('settles at once when it closes, though the transport reports the close later, and tells the close once', async () => {
    const transport = new LateClosingTransport();
    const client = new RpcClient(transport, { defaultTimeoutMs: 1_000 });
    const closed: CloseInfo[] = [];
    client.onDidClose((info) => closed.push(info));
    const pending = client.request(Requests.ping, {});
    assert.equal(client.isClosed, false);
    client.close();
    await assert.rejects(pending, /\(closed by the client\)/);
    assert.equal(client.isClosed, true);
    client.close('again'); // already closed: no second close frame
    assert.deepEqual(transport.closeCalls, [{ code: 1000, reason: 'closed by the client' }]);
    transport.reportClose(); // the handshake ends
    assert.deepEqual(closed, [{ code: 1000, reason: 'closed by the client' }]);
  });

  it('disposes its transport with itself', () => {
    const { transport, client } = connect();
    assert.equal(transport.disposed, false);
    client.dispose();
    assert.equal(transport.disposed, true);
  });

  it("rejects a request the transport cannot send with the transport's error", async () => {
    const { transport, client } = connect();
    const broken = new Error('the socket is not open');
    transport.send = () => {
      throw broken;
    };
    assert.equal(await client.request(Requests.ping, {}).catch((e: unknown) => e), broken);
    transport.send = () => {
      throw 'a thrown string';
    };
    const error = await client.request(Requests.ping, {}).catch((e: unknown) => e);
    assert.ok(error instanceof Error);
    assert.equal(error.message, 'a thrown string');
  });

  it('sends named params, {} even when a (JavaScript) caller passes none', () => {
    const { transport, client } = connect();
    void client.request(Requests.ping, undefined as never).catch(() => undefined);
    assert.deepEqual(transport.sent[0].params, {});
    client.dispose();
  });

  it('makes an RpcError of an error response that lacks its code or message', async () => {
    const { transport, client } = connect();
    for (const error of [{}, null]) {
      transport.onSend = (m) => transport.receive({ jsonrpc: '2.0', id: m.id, error });
      const rejected = await client.request(Requests.ping, {}).catch((e: unknown) => e);
      assert.ok(rejected instanceof RpcError, String(error));
      assert.deepEqual([rejected.code, rejected.message, rejected.method], [-32603, 'unknown error', 'ping']);
    }
  });

  it('stops the timer and drops the cancellation listener of a request once it is answered', async () => {
    const { transport, client } = connect({ timeoutMs: 60_000 });
    const { token, counts, cancel } = aToken();
    const before = timers();
    const pending = client.request(Requests.ping, {}, { token });
    assert.equal(timers(), before + 1);
    assert.equal(counts.subscribed, 1);
    transport.reply(1, { time: 5 });
    assert.equal(timers(), before, 'no timer left to keep the extension host busy');
    assert.equal(counts.disposed, 1);
    cancel(); // nothing listens any more
    assert.deepEqual(await pending, { time: 5 });
  });

  it('ignores a cancellation that comes after the answer, from a token that cannot unsubscribe', async () => {
    const { transport, client } = connect();
    const { token, cancel } = aToken({ canUnsubscribe: false });
    const pending = client.request(Requests.ping, {}, { token });
    transport.reply(1, { time: 5 });
    cancel();
    assert.deepEqual(await pending, { time: 5 });
  });

  it('tells every listener of a notification, and a notification without params as {}', () => {
    const { transport, client } = connect();
    const heard: unknown[] = [];
    client.on(Notifications.hostResync, (params) => heard.push(['first', params]));
    client.on(Notifications.hostResync, (params) => heard.push(['second', params]));
    transport.receive({ jsonrpc: '2.0', method: 'host/resync' });
    assert.deepEqual(heard, [
      ['first', {}],
      ['second', {}],
    ]);
  });

  it('reports an unknown notification with its params, and no known one as unknown', () => {
    const { transport, client } = connect();
    const unknown: unknown[] = [];
    client.onUnknownNotification((notification) => unknown.push(notification));
    const subscription = client.on(Notifications.hostResync, () => undefined);
    subscription.dispose(); // still known: its listener went, not the method
    transport.notify('host/resync', { seq: 1, reason: 'slow', dropped: 3 });
    transport.receive({ jsonrpc: '2.0', result: { time: 1 } }); // neither a method nor an id: no notification
    transport.notify('future/thing', { seq: 9, size: 3 });
    assert.deepEqual(unknown, [{ method: 'future/thing', params: { seq: 9, size: 3 } }]);
  });

  it('takes a frame with both a method and an id for neither a notification nor an answer to another request', async () => {
    const { transport, client } = connect();
    const states: unknown[] = [];
    client.on(Notifications.runState, (params) => states.push(params));
    const pending = client.request(Requests.ping, {});
    transport.receive({ jsonrpc: '2.0', id: 7, method: 'run/state', params: { seq: 1, run: aRunInfo() } });
    assert.deepEqual(states, []);
    transport.reply(1, { time: 3 });
    assert.deepEqual(await pending, { time: 3 });
  });

  it('does not take a request from the host for the answer to the request with its id', async () => {
    const { transport, client } = connect();
    const pending = client.request(Requests.ping, {});
    transport.receive({ jsonrpc: '2.0', id: 1, method: 'ping', params: {} });
    transport.reply(1, { time: 4 });
    assert.deepEqual(await pending, { time: 4 });
  });

  it('survives the JSON frames null and 5, and shows the observer each frame once, junk as its text', () => {
    const seen: Array<[Direction, unknown]> = [];
    const transport = new FakeTransport();
    const client = new RpcClient(transport, { observe: (direction, message) => seen.push([direction, message]) });
    transport.receive('null');
    transport.receive('5');
    transport.receive('not json {');
    void client.request(Requests.ping, {}).catch(() => undefined);
    assert.deepEqual(seen, [
      ['host→client', null],
      ['host→client', 5],
      ['host→client', 'not json {'],
      ['client→host', { jsonrpc: '2.0', id: 1, method: 'ping', params: {} }],
    ]);
    client.dispose();
  });

  it('turns an AbortSignal into a token whose subscription can be dropped', () => {
    const abort = new AbortController();
    const token = toCancellationToken(abort.signal);
    let heard = 0;
    token.onCancellationRequested(() => heard++);
    token.onCancellationRequested(() => (heard += 10)).dispose();
    assert.equal(token.isCancellationRequested, false);
    abort.abort();
    assert.equal(token.isCancellationRequested, true);
    assert.equal(heard, 1);
  });
});
