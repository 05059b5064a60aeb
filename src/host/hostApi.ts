import type { Event } from '../common/event';
import type { IDisposable } from '../common/lifecycle';
import type { RequestOptions } from '../rpc/client';
import type { NotificationType, RequestType } from '../rpc/methods';
import type { InitializeResult } from '../rpc/protocol';
import type { ConnectionHealthModel } from './connectionHealth';

/**
 * What models and views need from the host: requests, notifications, and (re)connection
 * events. HostManager implements it in the extension; unit tests hand models a fake.
 */
export interface HostApi {
  request<Params, Result>(type: RequestType<Params, Result>, params: Params, options?: RequestOptions): Promise<Result>;
  on<Params>(type: NotificationType<Params>, listener: (params: Params) => void): IDisposable;
  readonly onDidConnect: Event<{ readonly init: InitializeResult; readonly remote: boolean }>;
  readonly onDidDisconnect: Event<void>;
  readonly current: { readonly init: InitializeResult; readonly remote: boolean } | undefined;
  /** Whether what views show is live: connected, reconnecting (since, next try) or lost. */
  readonly health: ConnectionHealthModel;
}
