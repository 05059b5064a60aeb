// An `empo2` launch configuration: what it holds, what of it goes to `debug.start`, and the
// one line the debug console prints about the session the host opened.

import type { DebugProtocol } from '@vscode/debugprotocol';
import type { DebugSession as HostDebugSession, DebugStartParams } from '../rpc/debugProtocol';

/** What an `empo2` launch configuration holds (package.json `debuggers[].configurationAttributes`). */
export interface Empo2LaunchArguments extends DebugProtocol.LaunchRequestArguments, DebugStartParams {
  readonly stopOnEntry?: boolean;
  /** Replay: stop at the first turn where the policy would act differently. */
  readonly stopOnFirstDifference?: boolean;
}

/** The launch configuration's fields that go to `debug.start`, nothing else. */
export function launchParams(args: Empo2LaunchArguments): DebugStartParams {
  const keys = [
    'runId',
    'checkpoint',
    'policyPath',
    'task',
    'variation',
    'seed',
    'mode',
    'memoryRunId',
    'temperature',
    'device',
    'replay',
  ] as const;
  const params: Record<string, unknown> = {};
  for (const key of keys) {
    if (args[key] !== undefined && args[key] !== null && args[key] !== '') {
      params[key] = args[key];
    }
  }
  return params as DebugStartParams;
}

/**
 * A launch that names no policy (no `runId`, `policyPath` or `replay`) plays with the current
 * run (its newest checkpoint), so one launch.json serves every run; undefined when no run is current.
 */
export function withCurrentRun<
  T extends {
    readonly type: string;
    readonly runId?: unknown;
    readonly policyPath?: unknown;
    readonly replay?: unknown;
  },
>(config: T, currentRunId: string | undefined): T | undefined {
  if (config.runId || config.policyPath || config.replay) {
    return config;
  }
  return currentRunId ? { ...config, runId: currentRunId } : undefined;
}

/** The session in one line: what plays, with what, where; a replay's agreement with its recording. */
export function describeSession(s: HostDebugSession): string {
  const where = s.checkpoint !== null ? `checkpoint ${s.checkpoint}` : s.policy;
  const replay = s.replay
    ? ` Replaying ${s.replay.episodeId}: ${s.replay.turns} turns, max |Δ log p| ${s.replay.maxLogprobError.toExponential(1)}, ` +
      (s.replay.firstDifferentTurn === null
        ? 'greedy decoding agrees on every turn.'
        : `first different turn ${s.replay.firstDifferentTurn}.`) +
      (s.replay.note ? ` ${s.replay.note}` : '')
    : '';
  // The host's own run state: a paused run is not "training".
  const state = s.runState === 'running' ? 'training' : s.runState;
  return `${s.task} #${s.variation}, seed ${s.seed}, ${s.mode}, temperature ${s.temperature}, ${where} on ${s.device}.${replay}${state ? ` (The run is ${state}: this session uses its own read-only copy of the weights.)` : ''}`;
}
