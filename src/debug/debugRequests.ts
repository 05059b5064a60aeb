// The `debug.*` requests under the adapter's names (declared once, in rpc/methods.ts).
import { Requests, type RequestType } from '../rpc/methods';

export const DebugRequests = {
  start: Requests.debugStart,
  step: Requests.debugStep,
  force: Requests.debugForce,
  replayTurn: Requests.debugReplayTurn,
  state: Requests.debugState,
  stop: Requests.debugStop,
} as const;

/** What the debug adapter needs of the host: a way to send these requests. */
export interface DebugHostApi {
  request<Params, Result>(
    type: RequestType<Params, Result>,
    params: Params,
    options?: { timeoutMs?: number },
  ): Promise<Result>;
}
