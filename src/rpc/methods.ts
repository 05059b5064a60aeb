import type * as D from './debugProtocol';
import type * as P from './protocol';

// Every method and notification of the protocol, declared once: its wire name, the schema
// definitions of its params and result (so tests validate against exactly those), and as types
// only its params and result. The client's request() and on() take these constants, so a call
// with the wrong params or a handler expecting the wrong event does not compile
// (STYLE.md rule 7; the shape of vscode-languageserver-node's RequestType).

export interface RequestType<Params, Result> {
  readonly method: string;
  /** `#/$defs/<paramsSchema>` in protocol/empo2-protocol.schema.json. */
  readonly paramsSchema: string;
  readonly resultSchema: string;
  /** Never set; carries the types for the compiler. */
  readonly _types?: (params: Params) => Result;
}

export interface NotificationType<Params> {
  readonly method: string;
  readonly paramsSchema: string;
  readonly _types?: (params: Params) => void;
}

/** The DAP-style names: `run.start` → RunStartParams / RunStartResult. */
function request<Params, Result>(method: string): RequestType<Params, Result> {
  const stem = method
    .split('.')
    .map((part) => part[0].toUpperCase() + part.slice(1))
    .join('');
  return { method, paramsSchema: `${stem}Params`, resultSchema: `${stem}Result` };
}

function notification<Params>(method: string, paramsSchema: string): NotificationType<Params> {
  return { method, paramsSchema };
}

export const Requests = {
  initialize: request<P.InitializeParams, P.InitializeResult>('initialize'),
  shutdown: request<P.ShutdownParams, P.ShutdownResult>('shutdown'),
  ping: request<P.EmptyParams, P.PingResult>('ping'),
  runStart: request<P.RunStartParams, P.RunResult>('run.start'),
  runPause: request<P.RunPauseParams, P.RunResult>('run.pause'),
  runResume: request<P.RunResumeParams, P.RunResult>('run.resume'),
  runStop: request<P.OptionalRunParams, P.RunResult>('run.stop'),
  runList: request<P.EmptyParams, P.RunListResult>('run.list'),
  runOpen: request<P.RunOpenParams, P.RunOpenResult>('run.open'),
  runStatus: request<P.OptionalRunParams, P.RunStatusResult>('run.status'),
  runMetrics: request<P.RunMetricsParams, P.RunMetricsResult>('run.metrics'),
  trajectoryList: request<P.TrajectoryListParams, P.TrajectoryListResult>('trajectory.list'),
  trajectoryGet: request<P.TrajectoryGetParams, P.TrajectoryGetResult>('trajectory.get'),
  memoryList: request<P.MemoryListParams, P.MemoryListResult>('memory.list'),
  memoryGet: request<P.TipParams, P.TipResult>('memory.get'),
  memoryAdd: request<P.MemoryAddParams, P.TipResult>('memory.add'),
  memoryUpdate: request<P.MemoryUpdateParams, P.TipResult>('memory.update'),
  memoryDelete: request<P.MemoryDeleteParams, P.TipResult>('memory.delete'),
  memoryHistory: request<P.TipParams, P.MemoryHistoryResult>('memory.history'),
  checkpointList: request<P.CheckpointListParams, P.CheckpointListResult>('checkpoint.list'),
  logTail: request<P.LogTailParams, P.LogTailResult>('log.tail'),
  debugStart: request<D.DebugStartParams, D.DebugStartResult>('debug.start'),
  debugStep: request<D.DebugStepParams, D.DebugTurnResult>('debug.step'),
  debugForce: request<D.DebugForceParams, D.DebugTurnResult>('debug.force'),
  debugReplayTurn: request<D.DebugReplayTurnParams, D.DebugTurnResult>('debug.replayTurn'),
  debugState: request<D.DebugSessionParams, D.DebugStateResult>('debug.state'),
  debugStop: request<D.DebugSessionParams, D.DebugStopResult>('debug.stop'),
  updateRerun: request<P.UpdateRerunParams, P.UpdateRerunResult>('update.rerun'),
  updateCancel: request<P.UpdateCancelParams, P.UpdateCancelResult>('update.cancel'),
  updateCompare: request<P.UpdateCompareParams, P.UpdateCompareResult>('update.compare'),
  branchAdopt: request<P.BranchAdoptParams, P.BranchAdoptResult>('branch.adopt'),
  branchDelete: request<P.BranchDeleteParams, P.BranchDeleteResult>('branch.delete'),
  envList: request<P.EmptyParams, P.EnvListResult>('env.list'),
  configCheck: request<P.ConfigCheckParams, P.ConfigCheckResult>('config.check'),
  policyList: request<P.EmptyParams, P.PolicyListResult>('policy.list'),
} as const;

export const Notifications = {
  runState: notification<P.RunStateEvent>('run/state', 'RunStateEvent'),
  runProgress: notification<P.RunProgressEvent>('run/progress', 'RunProgressEvent'),
  runMetrics: notification<P.RunMetricsEvent>('run/metrics', 'RunMetricsEvent'),
  trajectoryAdded: notification<P.TrajectoryAddedEvent>('trajectory/added', 'TrajectoryAddedEvent'),
  trajectoryProgress: notification<P.TrajectoryProgressEvent>('trajectory/progress', 'TrajectoryProgressEvent'),
  memoryChanged: notification<P.MemoryChangedEvent>('memory/changed', 'MemoryChangedEvent'),
  logMessage: notification<P.LogMessageEvent>('log/message', 'LogMessageEvent'),
  hostResync: notification<P.ResyncEvent>('host/resync', 'ResyncEvent'),
  updateProgress: notification<P.UpdateProgressEvent>('update/progress', 'UpdateProgressEvent'),
  updateFinished: notification<P.UpdateFinishedEvent>('update/finished', 'UpdateFinishedEvent'),
} as const;

export type ParamsOf<T> =
  T extends RequestType<infer Params, unknown> ? Params : T extends NotificationType<infer Params> ? Params : never;
export type ResultOf<T> = T extends RequestType<unknown, infer Result> ? Result : never;
