import * as assert from 'node:assert/strict';
import {
  MessageEndpoint,
  notificationType,
  RequestFailedError,
  requestType,
  RequestTimeoutError,
} from '../../src/common/messageEndpoint';
import { aPortPair, flushMessages } from '../builders/fakePorts';

// The fake port pair stands in for a webview: a real one cannot exist outside VS Code. The
// integration and end-to-end tiers exercise the real webview of the Memory Tips view.

const Echo = requestType<{ text: string }, { echoed: string }>('test/echo');
const Fail = requestType<void, void>('test/fail');
const Never = requestType<void, void>('test/never');
const Unhandled = requestType<void, void>('test/unhandled');
const Changed = notificationType<{ state: string }>('test/changed');

function connect(options: { timeoutMs?: number } = {}) {
  const ports = aPortPair();
  const extension = new MessageEndpoint(ports.extensionSide, {
    awaitPeerReady: true,
    requestTimeoutMs: options.timeoutMs,
  });
  const webview = new MessageEndpoint(ports.webviewSide, {
    awaitPeerReady: false,
    requestTimeoutMs: options.timeoutMs,
  });
  return { ...ports, extension, webview };
}

describe('webview message endpoint', () => {
  describe('ready handshake', () => {
    it('holds what the extension sends until the webview says ready', async () => {
      const { extension, webview, extensionSide } = connect();
      const seen: string[] = [];
      webview.onNotification(Changed, ({ state }) => seen.push(state));

      extension.sendNotification(Changed, { state: 'starting' });
      extension.sendNotification(Changed, { state: 'running' });
      await flushMessages();
      assert.deepEqual(extensionSide.sent, [], 'nothing posted before ready');

      webview.signalReady();
      await flushMessages();
      assert.deepEqual(seen, ['starting', 'running'], 'delivered in order after ready');
    });

    it('resolves whenPeerReady on ready, and at once on the side that does not wait', async () => {
      const { extension, webview } = connect();
      let ready = false;
      void extension.whenPeerReady().then(() => (ready = true));
      await webview.whenPeerReady();
      await flushMessages();
      assert.equal(ready, false);
      webview.signalReady();
      await flushMessages();
      assert.equal(ready, true);
    });

    it('treats a second ready (a reloaded webview) as harmless', async () => {
      const { extension, webview } = connect();
      const seen: string[] = [];
      webview.onNotification(Changed, ({ state }) => seen.push(state));
      webview.signalReady();
      webview.signalReady();
      extension.sendNotification(Changed, { state: 'once' });
      await flushMessages();
      assert.deepEqual(seen, ['once']);
    });
  });

  describe('requests', () => {
    it("answers a request with its handler's result", async () => {
      const { extension, webview } = connect();
      extension.onRequest(Echo, ({ text }) => ({ echoed: text.toUpperCase() }));
      webview.signalReady();
      assert.deepEqual(await webview.sendRequest(Echo, { text: 'tip' }), { echoed: 'TIP' });
    });

    it('answers a webview that has not said ready yet: asking shows it is listening', async () => {
      const { extension, webview, webviewSide } = connect();
      extension.onRequest(Echo, ({ text }) => ({ echoed: text }));
      assert.deepEqual(await webview.sendRequest(Echo, { text: 'early' }), { echoed: 'early' });
      assert.ok(!webviewSide.sent.some((m) => m.kind === 'ready'));
    });

    it('numbers requests with increasing ids', async () => {
      const { extension, webview, webviewSide } = connect();
      extension.onRequest(Echo, async ({ text }) => ({ echoed: text }));
      await Promise.all([1, 2, 3].map((n) => webview.sendRequest(Echo, { text: String(n) })));
      const ids = webviewSide.sent.flatMap((m) => (m.kind === 'request' ? [m.id] : []));
      assert.deepEqual(ids, [1, 2, 3]);
    });

    it('matches responses to requests by id when they come back out of order', async () => {
      const { extension, webview } = connect();
      const delays: Record<string, number> = { slow: 30, fast: 1 };
      extension.onRequest(
        Echo,
        ({ text }) =>
          new Promise<{ echoed: string }>((resolve) => setTimeout(() => resolve({ echoed: text }), delays[text])),
      );
      const [slow, fast] = await Promise.all([
        webview.sendRequest(Echo, { text: 'slow' }),
        webview.sendRequest(Echo, { text: 'fast' }),
      ]);
      assert.deepEqual([slow.echoed, fast.echoed], ['slow', 'fast']);
    });

    it("rejects with the handler's error message", async () => {
      const { extension, webview } = connect();
      extension.onRequest(Fail, () => {
        throw new Error('the tip changed since you opened it');
      });
      await assert.rejects(webview.sendRequest(Fail, undefined), (error: Error) => {
        assert.ok(error instanceof RequestFailedError);
        // The person reads the handler's sentence, not the channel's method name.
        assert.equal(error.message, 'the tip changed since you opened it');
        assert.equal(error.method, 'test/fail');
        return true;
      });
    });

    it('rejects a request nobody handles', async () => {
      const { webview } = connect();
      await assert.rejects(webview.sendRequest(Unhandled, undefined), /no handler for 'test\/unhandled'/);
    });

    it('times out when no answer comes, and ignores a late one', async () => {
      const { extension, webview, extensionSide } = connect({ timeoutMs: 20 });
      extension.onRequest(Never, () => new Promise<void>(() => undefined));
      const started = Date.now();
      await assert.rejects(webview.sendRequest(Never, undefined), (error: Error) => {
        assert.ok(error instanceof RequestTimeoutError);
        assert.doesNotMatch(error.message, /test\/never|webview request/);
        return true;
      });
      assert.ok(Date.now() - started >= 15, 'waited for the timeout');
      const longer = Date.now();
      await assert.rejects(webview.sendRequest(Never, undefined, { timeoutMs: 60 }), RequestTimeoutError);
      assert.ok(Date.now() - longer >= 55, 'a request may wait longer than the endpoint default');
      extensionSide.deliver({ kind: 'response', id: 1, result: 'late' }); // must not throw
    });

    it('times out a request to a webview that never loads', async () => {
      const { extension } = connect({ timeoutMs: 20 });
      await assert.rejects(extension.sendRequest(Echo, { text: 'x' }), RequestTimeoutError);
    });

    it('rejects pending requests when the endpoint is disposed', async () => {
      const { extension, webview } = connect();
      extension.onRequest(Never, () => new Promise<void>(() => undefined));
      const pending = webview.sendRequest(Never, undefined);
      await flushMessages();
      webview.dispose();
      await assert.rejects(pending, /connection closed/);
      await assert.rejects(webview.sendRequest(Never, undefined), /the view was closed/);
    });
  });

  describe('robustness', () => {
    it('ignores messages that are not part of the protocol', async () => {
      const { extension, webview, extensionSide } = connect();
      extension.onRequest(Echo, ({ text }) => ({ echoed: text }));
      for (const junk of [
        null,
        42,
        'ready',
        {},
        { kind: 'request' },
        { kind: 'request', id: 'x', method: 'm' },
        { kind: 'response', id: 1, error: 5 },
      ]) {
        extensionSide.deliver(junk);
      }
      webview.signalReady();
      assert.deepEqual(await webview.sendRequest(Echo, { text: 'still fine' }), { echoed: 'still fine' });
    });

    it('stops delivering to a handler once it is disposed', async () => {
      const { extension, webview } = connect();
      const seen: string[] = [];
      const subscription = webview.onNotification(Changed, ({ state }) => seen.push(state));
      webview.signalReady();
      extension.sendNotification(Changed, { state: 'a' });
      await flushMessages();
      subscription.dispose();
      extension.sendNotification(Changed, { state: 'b' });
      await flushMessages();
      assert.deepEqual(seen, ['a']);
    });
  });
});
