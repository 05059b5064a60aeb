import * as assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { WebSocketServer } from 'ws';
import { RpcClient } from '../../src/rpc/client';
import { Requests } from '../../src/rpc/methods';
import { ConnectError, connectWebSocket } from '../../src/rpc/wsTransport';

// The WebSocket transport against a small `ws` server that checks the upgrade as the host does
// (host/empo2/server/transport/auth.py): a Bearer token, and no browser Origin.

const TOKEN = 'a-token-of-at-least-16-characters';

async function aServer(): Promise<{ url: string; server: WebSocketServer; headers: Array<Record<string, unknown>> }> {
  const headers: Array<Record<string, unknown>> = [];
  const server = new WebSocketServer({
    host: '127.0.0.1',
    port: 0,
    verifyClient: ({ req }, done) => {
      headers.push({ ...req.headers });
      if (req.headers.origin) {
        return done(false, 403);
      }
      done(req.headers.authorization === `Bearer ${TOKEN}`, 401);
    },
  });
  server.on('connection', (socket) => {
    socket.on('message', (data) => {
      const message = JSON.parse(String(data));
      socket.send(JSON.stringify({ jsonrpc: '2.0', id: message.id, result: { time: 7 } }));
      if (message.method === 'ping') {
        socket.send(
          JSON.stringify({ jsonrpc: '2.0', method: 'host/resync', params: { seq: 1, reason: 'test', dropped: 0 } }),
        );
      }
    });
  });
  await new Promise((resolve) => server.once('listening', resolve));
  return { url: `ws://127.0.0.1:${(server.address() as AddressInfo).port}`, server, headers };
}

describe('WebSocket transport', () => {
  it('sends the token as a Bearer header, no Origin, and carries requests both ways', async () => {
    const { url, server, headers } = await aServer();
    try {
      const client = new RpcClient(await connectWebSocket(url, TOKEN));
      assert.deepEqual(await client.request(Requests.ping, {}), { time: 7 });
      assert.equal(headers[0].authorization, `Bearer ${TOKEN}`);
      assert.equal(headers[0].origin, undefined);
      const closed = new Promise((resolve) => client.onDidClose(resolve));
      for (const socket of server.clients) {
        socket.close(1001, 'going away');
      }
      assert.deepEqual(await closed, { code: 1001, reason: 'going away' });
    } finally {
      server.close();
    }
  });

  it('says plainly when the token is wrong', async () => {
    const { url, server } = await aServer();
    try {
      const error = await connectWebSocket(url, 'wrong-token-wrong-token').catch((e: unknown) => e);
      assert.ok(error instanceof ConnectError);
      assert.equal(error.status, 401);
      assert.match(error.message, /refused the token/);
    } finally {
      server.close();
    }
  });

  it('says plainly when nothing listens', async () => {
    const { url, server } = await aServer();
    server.close();
    await new Promise((resolve) => setTimeout(resolve, 50));
    await assert.rejects(
      connectWebSocket(url, TOKEN, { openTimeoutMs: 2_000 }),
      /cannot connect to ws:\/\/127\.0\.0\.1:\d+: .*ECONNREFUSED/,
    );
  });
});
