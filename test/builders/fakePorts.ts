import { toDisposable } from '../../src/common/lifecycle';
import type { MessagePort, WireMessage } from '../../src/common/messageEndpoint';

/**
 * Two linked ends of a postMessage channel, standing in for an extension and a webview: a real
 * webview cannot exist outside VS Code. Like postMessage, delivery is asynchronous and copies
 * the message (structuredClone), and every posted message is recorded for assertions.
 */
export interface FakePort extends MessagePort {
  readonly sent: WireMessage[];
  /** Delivers raw data to this end's listeners, as if the other side had posted it. */
  deliver(data: unknown): void;
  /** Stop delivering to the other side (a webview that is gone or never loaded). */
  severed: boolean;
}

export function aPortPair(): { extensionSide: FakePort; webviewSide: FakePort } {
  const extensionSide = aPort();
  const webviewSide = aPort();
  extensionSide.peer = webviewSide;
  webviewSide.peer = extensionSide;
  return { extensionSide, webviewSide };
}

function aPort(): FakePort & { peer?: FakePort } {
  const listeners = new Set<(data: unknown) => void>();
  const port: FakePort & { peer?: FakePort } = {
    sent: [],
    severed: false,
    postMessage(message) {
      port.sent.push(message);
      if (!port.severed) {
        const copy = structuredClone(message);
        setImmediate(() => port.peer?.deliver(copy));
      }
    },
    onMessage(listener) {
      listeners.add(listener);
      return toDisposable(() => listeners.delete(listener));
    },
    deliver(data) {
      for (const listener of [...listeners]) {
        listener(data);
      }
    },
  };
  return port;
}

/** Waits until every message already posted has been delivered. */
export async function flushMessages(): Promise<void> {
  // A request and its response take two hops, each one setImmediate plus some microtasks.
  for (let round = 0; round < 5; round++) {
    await new Promise((resolve) => setImmediate(resolve));
  }
}
