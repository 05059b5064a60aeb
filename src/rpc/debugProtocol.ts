// The `debug.*` part of the EMPO² host protocol (1.1.0): the generated types under the names the
// debug adapter uses (src/rpc/generated/protocol.ts, from protocol/empo2-protocol.schema.json).

export type {
  DebugAlternative,
  DebugEpisodeState,
  DebugForceParams,
  DebugObservationMismatch,
  DebugReplaySummary,
  DebugReplayTurn,
  DebugReplayTurnParams,
  DebugSession,
  DebugSessionId,
  DebugStartParams,
  DebugStartResult,
  DebugStateResult,
  DebugStepParams,
  DebugStopResult,
  DebugTip,
  DebugToken,
  DebugTurn,
  DebugTurnResult,
} from './generated/protocol';
export type { DebugStateParams as DebugSessionParams } from './generated/protocol';
