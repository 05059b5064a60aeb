// The `debug.*` requests, typed (RequestType as in rpc/methods.ts: wire name, schema names).
import type { RequestType } from '../rpc/methods';
import type * as D from '../rpc/debugProtocol';

function request<Params, Result>(method: string, stem: string, result = `${stem}Result`): RequestType<Params, Result> {
  return { method, paramsSchema: `${stem}Params`, resultSchema: result };
}

export const DebugRequests = {
  start: request<D.DebugStartParams, D.DebugStartResult>('debug.start', 'DebugStart'),
  step: request<D.DebugStepParams, D.DebugTurnResult>('debug.step', 'DebugStep'),
  force: request<D.DebugForceParams, D.DebugTurnResult>('debug.force', 'DebugForce'),
  replayTurn: request<D.DebugReplayTurnParams, D.DebugTurnResult>('debug.replayTurn', 'DebugReplayTurn'),
  state: request<D.DebugSessionParams, D.DebugStateResult>('debug.state', 'DebugState'),
  stop: request<D.DebugSessionParams, D.DebugStopResult>('debug.stop', 'DebugStop'),
} as const;
