import { Emitter, type Event } from '../common/event';
import { Disposable, type IDisposable, toDisposable } from '../common/lifecycle';
import { ConnectionClosedError, RequestCancelledError, RequestTimeoutError, RpcError } from './errors';
import type { NotificationType, RequestType } from './methods';

// A JSON-RPC 2.0 client for the EMPO² host, free of vscode and of any socket library: it speaks
// through a Transport (wsTransport.ts in the extension, an in-memory pair in unit tests).
//
// - one request per frame, ids 1, 2, 3, … per connection, params always a named object;
// - every request has a timeout, and can be cancelled; the protocol has no cancel message, so
//   cancelling only stops waiting (a late answer is dropped);
// - when the transport closes, every pending request is rejected with ConnectionClosedError;
// - notifications go to typed listeners registered with on(Notifications.x, listener).

export interface CloseInfo {
  readonly code: number;
  readonly reason: string;
}

/** A text-frame channel to the host. */
export interface Transport extends IDisposable {
  send(text: string): void;
  readonly onMessage: Event<string>;
  /** Fires once, when the channel is gone (either side closed it, or it broke). */
  readonly onClose: Event<CloseInfo>;
  close(code?: number, reason?: string): void;
}

/** The shape of vscode.CancellationToken, so a Progress's token can be passed straight in. */
export interface CancellationToken {
  readonly isCancellationRequested: boolean;
  onCancellationRequested(listener: () => void): IDisposable;
}

export interface RequestOptions {
  /** Overrides the client's default timeout (ms). */
  readonly timeoutMs?: number;
  readonly token?: CancellationToken;
}

export type Direction = 'client→host' | 'host→client';

export interface RpcClientOptions {
  /** A request not answered within this many ms is rejected (default 30 s). */
  readonly defaultTimeoutMs?: number;
  /** Sees every message in both directions (tests validate them; the log can trace them). */
  readonly observe?: (direction: Direction, message: unknown) => void;
}

interface Pending {
  readonly method: string;
  readonly resolve: (result: unknown) => void;
  readonly reject: (error: Error) => void;
  readonly cleanup: () => void;
}

const DEFAULT_TIMEOUT_MS = 30_000;

export class RpcClient extends Disposable {
  private nextId = 1;
  private closedWith: CloseInfo | undefined;
  private readonly pending = new Map<number, Pending>();
  private readonly listeners = new Map<string, Emitter<unknown>>();
  private readonly _onDidClose = this._register(new Emitter<CloseInfo>());
  /** Fires once when the connection is gone; pending requests were rejected just before. */
  readonly onDidClose = this._onDidClose.event;
  private readonly _onUnknownNotification = this._register(new Emitter<{ method: string; params: unknown }>());
  /** A notification this client does not know (a newer host may send more); safe to ignore. */
  readonly onUnknownNotification = this._onUnknownNotification.event;
  private readonly defaultTimeoutMs: number;

  constructor(
    private readonly transport: Transport,
    private readonly options: RpcClientOptions = {},
  ) {
    super();
    this.defaultTimeoutMs = options.defaultTimeoutMs ?? DEFAULT_TIMEOUT_MS;
    this._register(transport.onMessage((text) => this.receive(text)));
    this._register(transport.onClose((info) => this.closed(info)));
    this._register(transport);
  }

  get isClosed(): boolean {
    return this.closedWith !== undefined;
  }

  /** Listens to a notification type (which makes it known: unknown ones are reported apart). */
  on<Params>(type: NotificationType<Params>, listener: (params: Params) => void): IDisposable {
    let emitter = this.listeners.get(type.method);
    if (!emitter) {
      emitter = this._register(new Emitter<unknown>());
      this.listeners.set(type.method, emitter);
    }
    return emitter.event(listener as (value: unknown) => void);
  }

  request<Params, Result>(
    type: RequestType<Params, Result>,
    params: Params,
    options: RequestOptions = {},
  ): Promise<Result> {
    const method = type.method;
    if (this.closedWith) {
      return Promise.reject(
        new ConnectionClosedError(method, this.closedWith.reason || `code ${this.closedWith.code}`),
      );
    }
    if (options.token?.isCancellationRequested) {
      return Promise.reject(new RequestCancelledError(method));
    }
    const id = this.nextId++;
    const message = { jsonrpc: '2.0', id, method, params: params ?? {} };
    return new Promise<Result>((resolve, reject) => {
      const timeoutMs = options.timeoutMs ?? this.defaultTimeoutMs;
      const timer = setTimeout(() => this.fail(id, new RequestTimeoutError(method, timeoutMs)), timeoutMs);
      const cancellation = options.token?.onCancellationRequested(() =>
        this.fail(id, new RequestCancelledError(method)),
      );
      this.pending.set(id, {
        method,
        resolve: resolve as (result: unknown) => void,
        reject,
        cleanup: () => {
          clearTimeout(timer);
          cancellation?.dispose();
        },
      });
      try {
        this.options.observe?.('client→host', message);
        this.transport.send(JSON.stringify(message));
      } catch (error) {
        this.fail(id, error instanceof Error ? error : new Error(String(error)));
      }
    });
  }

  /** Closes the connection; pending requests are rejected. */
  close(reason = 'closed by the client'): void {
    if (!this.closedWith) {
      this.transport.close(1000, reason);
      // Some transports report the close later (or never, if already broken): settle now.
      this.closed({ code: 1000, reason });
    }
  }

  override dispose(): void {
    this.close('the client was disposed');
    super.dispose();
  }

  private receive(text: string): void {
    let message: unknown;
    try {
      message = JSON.parse(text);
    } catch {
      this.options.observe?.('host→client', text);
      return; // Not JSON: a broken host must not break the extension; the observer saw it.
    }
    this.options.observe?.('host→client', message);
    if (typeof message !== 'object' || message === null || Array.isArray(message)) {
      return;
    }
    const m = message as Record<string, unknown>;
    if (typeof m.method === 'string' && m.id === undefined) {
      const emitter = this.listeners.get(m.method);
      // on() keeps an emitter for every method it was asked for, so no emitter means unknown.
      if (emitter) {
        emitter.fire(m.params ?? {});
      } else {
        this._onUnknownNotification.fire({ method: m.method, params: m.params });
      }
      return;
    }
    if (typeof m.id !== 'number') {
      return; // An error about a frame the host could not read (id null): nothing waits on it.
    }
    if (m.method !== undefined) {
      return; // A request from the host (the protocol has none): not the answer to ours, whatever its id.
    }
    const pending = this.pending.get(m.id);
    if (!pending) {
      return; // Timed out or cancelled already.
    }
    this.pending.delete(m.id);
    pending.cleanup();
    if (m.error !== undefined) {
      const error = (m.error ?? {}) as { code?: number; message?: string; data?: unknown };
      pending.reject(new RpcError(pending.method, error.code ?? -32603, error.message ?? 'unknown error', error.data));
    } else {
      pending.resolve(m.result);
    }
  }

  private fail(id: number, error: Error): void {
    const pending = this.pending.get(id);
    if (pending) {
      this.pending.delete(id);
      pending.cleanup();
      pending.reject(error);
    }
  }

  private closed(info: CloseInfo): void {
    if (this.closedWith) {
      return;
    }
    this.closedWith = info;
    const reason = info.reason || `code ${info.code}`;
    for (const [id, pending] of [...this.pending]) {
      this.fail(id, new ConnectionClosedError(pending.method, reason));
    }
    this._onDidClose.fire(info);
  }
}

export function toCancellationToken(signal: AbortSignal): CancellationToken {
  return {
    get isCancellationRequested() {
      return signal.aborted;
    },
    onCancellationRequested(listener) {
      signal.addEventListener('abort', listener, { once: true });
      return toDisposable(() => signal.removeEventListener('abort', listener));
    },
  };
}
