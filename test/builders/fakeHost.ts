import { Emitter } from '../../src/common/event';
import { toDisposable, type IDisposable } from '../../src/common/lifecycle';
import { ConnectionHealthModel } from '../../src/host/connectionHealth';
import type { HostApi } from '../../src/host/hostApi';
import { RpcError } from '../../src/rpc/errors';
import type { NotificationType, RequestType } from '../../src/rpc/methods';
import type { InitializeResult } from '../../src/rpc/protocol';
import { schemaErrors } from './schema';

/** A handler for some method's params: handle() pairs it with that method's type. */
type Handler = (params: never) => unknown;

/**
 * A HostApi for model tests: each method answered by a handler the test installs, every
 * request's params and every result checked against the protocol schema (so a model that sends
 * what the host would refuse fails its tests), and notifications fired on demand.
 */
export class FakeHost implements HostApi {
  readonly calls: Array<{ method: string; params: unknown }> = [];
  private readonly handlers = new Map<string, Handler>();
  private readonly emitters = new Map<string, Emitter<unknown>>();
  private readonly _onDidConnect = new Emitter<{ init: InitializeResult; remote: boolean }>();
  readonly onDidConnect = this._onDidConnect.event;
  private readonly _onDidDisconnect = new Emitter<void>();
  readonly onDidDisconnect = this._onDidDisconnect.event;
  current: { init: InitializeResult; remote: boolean } | undefined = { init: anInitializeResult(), remote: false };
  readonly health = new ConnectionHealthModel();
  /** Schema violations seen (params or results); tests assert it stays empty. */
  readonly violations: string[] = [];

  constructor() {
    this.health.set({ kind: 'connected', since: Date.now(), remote: false, url: 'ws://fake' });
  }

  handle<P, R>(type: RequestType<P, R>, handler: (params: P) => R | Promise<R>): this {
    this.handlers.set(type.method, handler);
    return this;
  }

  async request<P, R>(type: RequestType<P, R>, params: P): Promise<R> {
    this.calls.push({ method: type.method, params });
    this.violations.push(...schemaErrors(type.paramsSchema, params ?? {}));
    const handler = this.handlers.get(type.method);
    if (!handler) {
      throw new RpcError(type.method, -32601, `the fake host has no handler for ${type.method}`);
    }
    const result = (await (handler as (params: P) => R | Promise<R>)(params)) as R;
    this.violations.push(...schemaErrors(type.resultSchema, result));
    return result;
  }

  on<P>(type: NotificationType<P>, listener: (params: P) => void): IDisposable {
    let emitter = this.emitters.get(type.method);
    if (!emitter) {
      emitter = new Emitter<unknown>();
      this.emitters.set(type.method, emitter);
    }
    const subscription = emitter.event(listener as (value: unknown) => void);
    return toDisposable(() => subscription.dispose());
  }

  notify<P>(type: NotificationType<P>, params: P): void {
    this.violations.push(...schemaErrors(type.paramsSchema, params));
    this.emitters.get(type.method)?.fire(params);
  }

  connect(): void {
    this.current = { init: anInitializeResult(), remote: false };
    this.health.set({ kind: 'connected', since: Date.now(), remote: false, url: 'ws://fake' });
    this._onDidConnect.fire(this.current);
  }

  /** The link drops: the host manager says reconnecting, then fires onDidDisconnect. With
   *  `gone`, the host process has exited already: no host is meant to be connected any more. */
  disconnect(gone = false): void {
    this.current = undefined;
    this.health.set(
      gone
        ? { kind: 'none' }
        : { kind: 'reconnecting', since: Date.now(), remote: false, url: 'ws://fake', attempts: 0 },
    );
    this._onDidDisconnect.fire();
  }

  callsOf(method: string): unknown[] {
    return this.calls.filter((c) => c.method === method).map((c) => c.params);
  }
}

export function anInitializeResult(): InitializeResult {
  return {
    protocolVersion: '1.1.0',
    serverInfo: {
      name: 'empo2-host',
      version: '0.1.0',
      pid: 1234,
      device: { kind: 'cpu', name: 'CPU (2 cores)', memoryBytes: null, count: 1 },
    },
    connection: 1,
    capabilities: {
      maxConcurrentRuns: 1,
      batchRequests: false,
      maxFrameBytes: 1_048_576,
      requestsPerSecond: 200,
      requestBurst: 400,
      inboxLimit: 64,
      sendQueueLimit: 256,
      runRoots: ['/home/ada/project/.empo2/runs'],
      presets: ['builtin', 'builtin-smoke'],
      methods: [],
      notifications: [],
      trajectoryFilters: [],
      memoryEditsReachTraining: true,
    },
  };
}
