import { ErrorCodes, type ErrorCode, type Tip, type VersionConflictData } from './protocol';

// What a request can end in besides its result. Each keeps the method (`.method`) for the log,
// and says in its message what happened in words a person knows, without wire names.

/** A JSON-RPC error response from the host: its code (ErrorCodes), one sentence, and data. */
export class RpcError extends Error {
  constructor(
    readonly method: string,
    readonly code: ErrorCode | number,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
    this.name = 'RpcError';
  }

  /** The tip as it is now, when this is a VersionConflict (someone else edited it first). */
  get conflictingTip(): Tip | undefined {
    if (this.code !== ErrorCodes.VersionConflict) {
      return undefined;
    }
    return (this.data as VersionConflictData | undefined)?.tip;
  }
}

export class RequestTimeoutError extends Error {
  constructor(
    readonly method: string,
    readonly timeoutMs: number,
  ) {
    super(`the training host did not answer within ${Math.round(timeoutMs / 100) / 10} s`);
    this.name = 'RequestTimeoutError';
  }
}

export class RequestCancelledError extends Error {
  constructor(readonly method: string) {
    super(`'${method}' was cancelled`);
    this.name = 'RequestCancelledError';
  }
}

/** The connection closed before the answer came (or was closed when the request was made). */
export class ConnectionClosedError extends Error {
  constructor(
    readonly method: string,
    reason: string,
  ) {
    super(`the connection to the training host dropped before it answered (${reason})`);
    this.name = 'ConnectionClosedError';
  }
}

export function isRpcError(error: unknown, code?: number): error is RpcError {
  return error instanceof RpcError && (code === undefined || error.code === code);
}

/** One sentence for a person, whatever was thrown. */
export function describeError(error: unknown): string {
  if (error instanceof Error) {
    return error.message;
  }
  return String(error);
}
