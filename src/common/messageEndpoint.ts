import { Disposable, IDisposable, toDisposable } from './lifecycle';

// Typed requests, responses and notifications between the extension and one webview, over
// postMessage. Both sides use this same class: the extension through webviewPort.ts, the
// webview through webview/common/bridge.ts. It needs neither vscode nor the DOM.
//
// Handshake: a webview's script loads after the extension has set its HTML, so the extension
// side (awaitPeerReady) holds everything it sends until the webview posts `ready`. The webview
// side calls signalReady() once its handlers are installed. Initial state travels in the HTML
// (see html.ts), so first paint never waits for a message.

/** A request declared once: its method name, and (as types only) its params and result. */
export interface RequestType<P, R> {
  readonly method: string;
  /** Never set; carries P and R for the type checker. */
  readonly _types?: (params: P) => R;
}

/** A one-way message declared once: its method name and (as a type only) its params. */
export interface NotificationType<P> {
  readonly method: string;
  readonly _types?: (params: P) => void;
}

export function requestType<P, R>(method: string): RequestType<P, R> {
  return { method };
}

export function notificationType<P>(method: string): NotificationType<P> {
  return { method };
}

export type WireMessage =
  | { readonly kind: 'ready' }
  | { readonly kind: 'request'; readonly id: number; readonly method: string; readonly params: unknown }
  | { readonly kind: 'response'; readonly id: number; readonly result?: unknown; readonly error?: string }
  | { readonly kind: 'notification'; readonly method: string; readonly params: unknown };

/** The two ends of postMessage, as each side sees them. */
export interface MessagePort {
  postMessage(message: WireMessage): void;
  onMessage(listener: (message: unknown) => void): IDisposable;
}

export interface MessageEndpointOptions {
  /** Hold outgoing messages until the other side posts `ready` (the extension's side). */
  readonly awaitPeerReady: boolean;
  /** A request not answered within this many milliseconds is rejected. Default 10 s. */
  readonly requestTimeoutMs?: number;
}

// Their messages are for the person looking at the view: the handler's own sentence, or what
// went wrong in plain words; the request's method stays in `.method` for logs and tests.

export class RequestTimeoutError extends Error {
  constructor(
    readonly method: string,
    timeoutMs: number,
  ) {
    super(`EMPO² did not answer within ${Math.round(timeoutMs / 1000)} s`);
    this.name = 'RequestTimeoutError';
  }
}

export class RequestFailedError extends Error {
  constructor(
    readonly method: string,
    reason: string,
  ) {
    super(reason);
    this.name = 'RequestFailedError';
  }
}

export interface SendOptions {
  /** Overrides the endpoint's timeout: a save that waits for a reconnect may take minutes. */
  readonly timeoutMs?: number;
}

interface PendingRequest {
  readonly method: string;
  readonly resolve: (result: unknown) => void;
  readonly reject: (error: Error) => void;
  readonly timer: ReturnType<typeof setTimeout>;
}

type RequestHandler = (params: unknown) => unknown;
type NotificationHandler = (params: unknown) => void;

const DEFAULT_TIMEOUT_MS = 10_000;

export class MessageEndpoint extends Disposable {
  private nextId = 1;
  private peerReady: boolean;
  private readonly outbox: WireMessage[] = [];
  private readonly pending = new Map<number, PendingRequest>();
  private readonly requestHandlers = new Map<string, RequestHandler>();
  private readonly notificationHandlers = new Map<string, NotificationHandler>();
  private readonly readyWaiters: Array<() => void> = [];
  private readonly timeoutMs: number;

  constructor(
    private readonly port: MessagePort,
    options: MessageEndpointOptions,
  ) {
    super();
    this.peerReady = !options.awaitPeerReady;
    this.timeoutMs = options.requestTimeoutMs ?? DEFAULT_TIMEOUT_MS;
    this._register(port.onMessage((message) => this.receive(message)));
    this._register(toDisposable(() => this.rejectAllPending('the webview connection closed')));
  }

  /** Resolves once the other side has posted `ready` (at once on the webview's side). */
  whenPeerReady(): Promise<void> {
    return this.peerReady ? Promise.resolve() : new Promise((resolve) => this.readyWaiters.push(resolve));
  }

  /** Tells the other side that this side's handlers are installed. */
  signalReady(): void {
    this.port.postMessage({ kind: 'ready' });
  }

  onRequest<P, R>(type: RequestType<P, R>, handler: (params: P) => R | Promise<R>): IDisposable {
    this.requestHandlers.set(type.method, handler as RequestHandler);
    return toDisposable(() => this.requestHandlers.delete(type.method));
  }

  onNotification<P>(type: NotificationType<P>, handler: (params: P) => void): IDisposable {
    this.notificationHandlers.set(type.method, handler as NotificationHandler);
    return toDisposable(() => this.notificationHandlers.delete(type.method));
  }

  /** Sends a request; the timeout runs from now, so a webview that never loads still fails. */
  sendRequest<P, R>(type: RequestType<P, R>, params: P, options: SendOptions = {}): Promise<R> {
    if (this.isDisposed) {
      return Promise.reject(new RequestFailedError(type.method, 'the view was closed'));
    }
    const id = this.nextId++;
    const timeoutMs = options.timeoutMs ?? this.timeoutMs;
    return new Promise<R>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new RequestTimeoutError(type.method, timeoutMs));
      }, timeoutMs);
      this.pending.set(id, { method: type.method, resolve: resolve as (result: unknown) => void, reject, timer });
      this.send({ kind: 'request', id, method: type.method, params });
    });
  }

  sendNotification<P>(type: NotificationType<P>, params: P): void {
    if (!this.isDisposed) {
      this.send({ kind: 'notification', method: type.method, params });
    }
  }

  private send(message: WireMessage): void {
    if (this.peerReady) {
      this.port.postMessage(message);
    } else {
      this.outbox.push(message);
    }
  }

  private receive(message: unknown): void {
    if (this.isDisposed || !isWireMessage(message)) {
      return; // Not ours (or malformed): a webview must never crash its host by posting junk.
    }
    switch (message.kind) {
      case 'ready':
        this.markPeerReady();
        return;
      case 'response':
        this.settle(message.id, message.result, message.error);
        return;
      case 'notification':
        this.notificationHandlers.get(message.method)?.(message.params);
        return;
      case 'request':
        void this.answer(message.id, message.method, message.params);
        return;
    }
  }

  private markPeerReady(): void {
    // A webview that reloads posts `ready` again; by then the outbox is empty and this is a no-op.
    this.peerReady = true;
    for (const message of this.outbox.splice(0)) {
      this.port.postMessage(message);
    }
    for (const resolve of this.readyWaiters.splice(0)) {
      resolve();
    }
  }

  private settle(id: number, result: unknown, error: string | undefined): void {
    const request = this.pending.get(id);
    if (!request) {
      return; // Already timed out, or never ours.
    }
    this.pending.delete(id);
    clearTimeout(request.timer);
    if (error !== undefined) {
      request.reject(new RequestFailedError(request.method, error));
    } else {
      request.resolve(result);
    }
  }

  private async answer(id: number, method: string, params: unknown): Promise<void> {
    // Responses skip the outbox: a peer that sends a request is loaded and waiting for it.
    const handler = this.requestHandlers.get(method);
    if (!handler) {
      this.port.postMessage({ kind: 'response', id, error: `no handler for '${method}'` });
      return;
    }
    try {
      const result = await handler(params);
      if (!this.isDisposed) {
        this.port.postMessage({ kind: 'response', id, result });
      }
    } catch (error) {
      if (!this.isDisposed) {
        this.port.postMessage({ kind: 'response', id, error: error instanceof Error ? error.message : String(error) });
      }
    }
  }

  private rejectAllPending(reason: string): void {
    for (const [id, request] of this.pending) {
      clearTimeout(request.timer);
      request.reject(new RequestFailedError(request.method, reason));
      this.pending.delete(id);
    }
  }
}

export function isWireMessage(value: unknown): value is WireMessage {
  if (typeof value !== 'object' || value === null) {
    return false;
  }
  const message = value as Record<string, unknown>;
  switch (message.kind) {
    case 'ready':
      return true;
    case 'request':
      return Number.isInteger(message.id) && typeof message.method === 'string';
    case 'response':
      return Number.isInteger(message.id) && (message.error === undefined || typeof message.error === 'string');
    case 'notification':
      return typeof message.method === 'string';
    default:
      return false;
  }
}
