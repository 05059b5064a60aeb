// The `debug.*` requests under the adapter's names (declared once, in rpc/methods.ts).
import { Requests } from '../rpc/methods';

export const DebugRequests = {
  start: Requests.debugStart,
  step: Requests.debugStep,
  force: Requests.debugForce,
  replayTurn: Requests.debugReplayTurn,
  state: Requests.debugState,
  stop: Requests.debugStop,
} as const;
