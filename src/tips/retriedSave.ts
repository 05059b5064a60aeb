import { whenConnected, type ConnectionHealthModel } from '../host/connectionHealth';
import { ConnectionClosedError, RequestTimeoutError } from '../rpc/errors';

// A person's save that survives a dropped link. The caller picks one edit id per save and sends
// it with every attempt; when an attempt ends without an answer (the connection closed under
// it, or it timed out on a link that went silent) this waits for the next connection and sends
// the very same request again. The host applies an edit id once and answers a repeat with what
// it recorded (`replayed: true`), so the result is the same whether the first attempt arrived
// or not. A JSON-RPC error (a conflict, a deleted tip) is an answer: it ends the save.

/** At most this many attempts per save (each one waits for a connection first). */
export const MAX_SAVE_ATTEMPTS = 6;

export function isLinkFailure(error: unknown): boolean {
  return error instanceof ConnectionClosedError || error instanceof RequestTimeoutError;
}

export async function saveAcrossReconnects<T>(
  attempt: () => Promise<T>,
  health: ConnectionHealthModel,
  onRetry?: (attempt: number, error: unknown) => void,
): Promise<T> {
  for (let n = 1; ; n++) {
    await whenConnected(health);
    try {
      return await attempt();
    } catch (error) {
      if (!isLinkFailure(error) || n >= MAX_SAVE_ATTEMPTS) {
        throw error;
      }
      // The client rejects pending requests and then reports the close, in one turn, so the
      // health model already says "reconnecting" here: the next whenConnected() waits.
      onRetry?.(n, error);
    }
  }
}
