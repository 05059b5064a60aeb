// The `debug.*` part of the EMPO² host protocol (1.1.0), written from
// protocol/empo2-protocol.schema.json like protocol.ts (same names as the schema's definitions;
// the unit tests check the methods against the schema with ajv). A file of its own, imported
// by methods.ts and the debug adapter.

import type { EpisodeId, RolloutMode, RunId, UpdateMode } from './protocol';

export type DebugSessionId = string;

export interface DebugStartParams {
  readonly runId?: RunId;
  /** Iteration of the run's checkpoint (default: the newest; for a replay, the one that played it). */
  readonly checkpoint?: number;
  /** Any policy folder inside the host's run roots, or `builtin`. */
  readonly policyPath?: string;
  readonly task?: string;
  readonly variation?: number;
  readonly seed?: number;
  readonly mode?: RolloutMode;
  readonly memoryRunId?: RunId;
  readonly temperature?: number;
  readonly device?: string;
  readonly replay?: { readonly runId: RunId; readonly episodeId: EpisodeId };
}

export interface DebugReplaySummary {
  readonly runId?: RunId | null;
  readonly episodeId: EpisodeId;
  readonly iteration?: number | null;
  readonly turns: number;
  readonly firstDifferentTurn: number | null;
  readonly maxLogprobError: number;
  readonly advantage?: number | null;
  readonly updateMode?: UpdateMode | null;
}

export interface DebugSession {
  readonly sessionId: DebugSessionId;
  readonly memoryRunId?: RunId | null;
  readonly task: string;
  readonly variation: number;
  readonly seed: number;
  readonly mode: RolloutMode;
  readonly temperature: number;
  readonly policy: string;
  readonly checkpoint: number | null;
  readonly device: string;
  readonly description: string;
  readonly maxActionTokens?: number;
  /** The environment's step limit: how many lines the episode document has. */
  readonly maxSteps?: number;
  readonly replay: DebugReplaySummary | null;
  readonly alongsideTraining: boolean;
}

export interface DebugTip {
  readonly id: string;
  readonly text: string;
  readonly similarity: number | null;
  readonly score: number | null;
}

export interface DebugAlternative {
  readonly id: number;
  readonly text: string;
  readonly logprob: number;
}

export interface DebugToken {
  readonly index: number;
  readonly id: number;
  readonly text: string;
  readonly logprob: number;
  readonly logprobNoTips: number;
  readonly alternatives: readonly DebugAlternative[];
  readonly ratio: number | null;
  readonly masked: boolean | null;
}

export interface DebugReplayTurn {
  readonly recordedAction: string;
  readonly recordedExecutedAction?: string;
  readonly recordedLogprobs: readonly number[];
  readonly maxLogprobError: number;
  readonly differs: boolean;
  readonly firstDifferentToken?: number | null;
  readonly preferredToken?: string | null;
  readonly recordedReward?: number | null;
  readonly recordedScore?: number | null;
  readonly recordedIntrinsic?: number | null;
  readonly recordedNextObservation?: string | null;
  readonly observationMatches?: boolean | null;
  readonly advantage: number | null;
  readonly updateMode: UpdateMode | null;
}

export interface DebugTurn {
  readonly index: number;
  readonly observation: string;
  readonly prompt: string;
  readonly promptNoTips: string;
  readonly tips: readonly DebugTip[];
  readonly action: string;
  readonly executedAction: string | null;
  readonly corrected: boolean;
  readonly forced: boolean;
  readonly executed: boolean;
  readonly tokens: readonly DebugToken[];
  readonly minLogprob: number | null;
  readonly greedyDiffers?: boolean;
  readonly reward: number | null;
  readonly score: number | null;
  readonly intrinsic: number | null;
  readonly scoreChanged: boolean;
  readonly nextObservation?: string | null;
  readonly done: boolean;
  readonly success: boolean;
  readonly replay: DebugReplayTurn | null;
}

export interface DebugEpisodeState {
  readonly turns: number;
  readonly done: boolean;
  readonly success: boolean;
  readonly score: number;
  readonly observation: string;
  readonly firstObservation: string;
  readonly replaying: boolean;
}

export interface DebugSessionParams {
  readonly sessionId: DebugSessionId;
}

export interface DebugStepParams extends DebugSessionParams {
  readonly unit?: 'token' | 'turn';
}

export interface DebugForceParams extends DebugSessionParams {
  readonly action: string;
}

export interface DebugReplayTurnParams extends DebugSessionParams {
  readonly turn: number;
}

export interface DebugStartResult {
  readonly session: DebugSession;
}

export interface DebugTurnResult {
  readonly turn: DebugTurn;
  readonly executed: boolean;
  readonly revealed: number;
  readonly episode: DebugEpisodeState;
  readonly previous?: DebugTurn | null;
}

export interface DebugStateResult {
  readonly session: DebugSession;
  readonly turns: readonly DebugTurn[];
  readonly pending: DebugTurn | null;
  readonly revealed: number;
  readonly episode: DebugEpisodeState;
}

export interface DebugStopResult {
  readonly stopped: true;
}
