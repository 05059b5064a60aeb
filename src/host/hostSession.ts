import { RpcClient } from '../rpc/client';
import { Requests } from '../rpc/methods';
import { PROTOCOL_VERSION, type InitializeResult } from '../rpc/protocol';
import { KEEPALIVE_DEFAULTS } from '../rpc/keepalive';
import { describeError } from '../rpc/errors';
import { ConnectError, connectWebSocket } from '../rpc/wsTransport';

// One connection to a host: dial, wire notifications, `initialize`. HostManager decides when
// (start, reconnect, remote); this file knows how.

/** Where a host listens, and whether it runs here. */
export interface HostTarget {
  readonly url: string;
  readonly token: string;
  readonly remote: boolean;
}

/** A connected, initialized host. */
export interface HostSession {
  readonly client: RpcClient;
  readonly init: InitializeResult;
  readonly url: string;
  readonly remote: boolean;
}

export interface OpenSessionOptions {
  /** A reconnect attempt gives up sooner than a first connect, so a link that is back is used soon. */
  readonly openTimeoutMs?: number;
}

/**
 * Connects (with a keepalive that drops a link gone silent), forwards every notification method
 * in `methods` to `forward`, and initializes.
 */
export async function openHostSession(
  target: HostTarget,
  extensionVersion: string,
  methods: Iterable<string>,
  forward: (method: string, params: unknown) => void,
  options: OpenSessionOptions = {},
): Promise<HostSession> {
  const openTimeoutMs = options.openTimeoutMs ?? 10_000;
  const transport = await connectWebSocket(target.url, target.token, { openTimeoutMs, keepalive: KEEPALIVE_DEFAULTS });
  const client = new RpcClient(transport, { defaultTimeoutMs: 30_000 });
  for (const method of methods) {
    client.on({ method, paramsSchema: '' }, (params) => forward(method, params));
  }
  try {
    const init = await client.request(
      Requests.initialize,
      {
        protocolVersion: PROTOCOL_VERSION,
        clientInfo: { name: 'EMPO² Studio', version: extensionVersion },
        // A spawned host's log already reaches us on its stderr; a remote one's only this way.
        capabilities: { logMessages: target.remote, progress: true },
      },
      { timeoutMs: Math.max(openTimeoutMs, 5_000) },
    );
    return { client, init, url: target.url, remote: target.remote };
  } catch (error) {
    client.dispose();
    throw error;
  }
}

/** Why `url` cannot be reached, naming it once: a ConnectError's message already does. */
export function connectFailure(url: string, error: unknown): string {
  return error instanceof ConnectError ? error.message : `cannot connect to ${url}: ${describeError(error)}`;
}
