// The EMPO² host protocol's data types, written from protocol/empo2-protocol.schema.json (one
// interface per schema definition, same names). Written by hand for readable types; the unit
// tests (test/unit/protocolSchema.unit.test.ts) check every method and notification declared in
// methods.ts against the schema with ajv, so a drift between the two fails the build.
//
// Protocol fields are camelCase; records read from a run folder (metrics, trajectory summaries,
// episodes, configs) travel verbatim in the run folder's snake_case (docs/run-folder.md).

export const PROTOCOL_VERSION = '1.1.0';

export type RunId = string;
export type EpisodeId = string;
export type TipId = string;
export type Cursor = string;

export type RunState =
  | 'created'
  | 'starting'
  | 'running'
  | 'pausing'
  | 'paused'
  | 'stopping'
  | 'stopped'
  | 'finished'
  | 'failed';

export type RolloutMode = 'memory' | 'memory-free';
export type UpdateMode = 'on-policy' | 'on-policy-with-tips' | 'off-policy';

export interface RunInfo {
  readonly runId: RunId;
  /** The run folder, absolute, symlinks resolved. */
  readonly path: string;
  readonly state: RunState;
  /** The last completed iteration. */
  readonly iteration: number;
  /** The configured number of iterations (null when the config cannot be read). */
  readonly iterations: number | null;
  /** True while this host trains the run. */
  readonly live: boolean;
  readonly updated: number | null;
  readonly error?: string;
  /** A branch run only (1.1.0): its parent run and checkpoint. */
  readonly parent?: BranchOrigin;
}

export interface BranchOrigin {
  readonly runId: RunId;
  readonly checkpoint: number;
  readonly adopted: boolean;
}

export interface Progress {
  /** The iteration in progress. */
  readonly iteration: number;
  readonly phase: 'rollout' | 'update' | 'evaluation';
  readonly done: number;
  readonly total: number;
}

export interface CheckpointInfo {
  readonly iteration: number;
  readonly path: string;
  readonly hasModel: boolean;
  readonly latest: boolean;
  readonly memoryMarker?: unknown;
}

/** One line of metrics.jsonl, verbatim (`rollout/return`, `update/clip_fraction`, …). */
export interface MetricsRecord {
  readonly iteration: number;
  readonly [key: string]: number | string | boolean | null;
}

export interface RunStatus extends RunInfo {
  readonly config: Record<string, unknown>;
  readonly latestMetrics: MetricsRecord | null;
  readonly checkpoints: readonly CheckpointInfo[];
  readonly progress: Progress | null;
  readonly pauseAfterIteration: number | null;
  /** Episodes in the trajectory index. */
  readonly episodes: number;
}

/** One line of trajectories/index.jsonl, verbatim. */
export interface TrajectorySummary {
  readonly id: EpisodeId;
  readonly iteration: number;
  readonly task: string;
  readonly variation: number;
  readonly group?: number;
  readonly rollout_mode: RolloutMode;
  readonly update_mode: UpdateMode;
  readonly return: number;
  readonly success: boolean;
  readonly steps: number;
  readonly intrinsic?: number;
  readonly tip_id?: TipId | null;
}

export interface TrajectoryStep {
  readonly t: number;
  readonly observation: string;
  /** The user turn as the policy saw it (with the <tip> block in memory mode). */
  readonly prompt: string;
  readonly prompt_no_tips: string;
  readonly tips: readonly string[];
  readonly tip_ids: readonly string[];
  readonly prompt_ids?: readonly number[];
  readonly prompt_ids_no_tips?: readonly number[];
  readonly action: string;
  readonly executed_action?: string;
  readonly action_ids: readonly number[];
  readonly behaviour_logprobs: readonly number[];
  readonly reward: number;
  readonly intrinsic: number;
  readonly score?: number;
  readonly next_observation?: string;
}

/** One episode in full (a line of trajectories/iter-NNNNNN.jsonl). */
export interface Episode extends Omit<TrajectorySummary, 'steps'> {
  readonly steps: readonly TrajectoryStep[];
  readonly description: string;
  /** The tip the policy wrote after the episode. */
  readonly tip: string | null;
}

export interface Author {
  readonly kind: 'policy' | 'person' | 'system';
  readonly name: string;
  readonly connection?: number;
}

export interface TipProvenance {
  readonly run?: string;
  readonly iteration?: number;
  readonly episode?: EpisodeId;
  readonly step?: number;
  readonly score?: number;
  readonly [key: string]: unknown;
}

export interface Tip {
  readonly id: TipId;
  /** The task variation whose buffer holds the tip (e.g. `power-device/3`). */
  readonly variationKey: string;
  readonly text: string;
  /** Starts at 1; each update or delete adds one. */
  readonly version: number;
  readonly deleted: boolean;
  readonly evicted: boolean;
  /** Who wrote the first version: "policy" or a person. */
  readonly author: string;
  readonly provenance: TipProvenance;
  readonly score: number | null;
  readonly entries: number;
  readonly created: string | null;
  readonly updated: string | null;
}

export interface TipVersion {
  readonly version: number;
  readonly text: string;
  readonly author: string;
  readonly kind: 'add' | 'update' | 'delete' | 'evict';
  readonly at: string | null;
}

export interface ClientInfo {
  readonly name: string;
  readonly version?: string;
}

export interface ClientCapabilities {
  readonly logMessages?: boolean;
  readonly progress?: boolean;
}

export interface HostCapabilities {
  readonly maxConcurrentRuns: number;
  readonly batchRequests: boolean;
  readonly maxFrameBytes: number;
  readonly requestsPerSecond: number;
  readonly requestBurst: number;
  readonly inboxLimit: number;
  readonly sendQueueLimit: number;
  readonly runRoots: readonly string[];
  readonly presets: readonly string[];
  readonly methods: readonly string[];
  readonly notifications: readonly string[];
  readonly trajectoryFilters: readonly string[];
  readonly memoryEditsReachTraining: boolean;
}

/** The host's compute device, when the host reports it (protocol 1.1). */
export interface DeviceInfo {
  readonly kind: 'cpu' | 'cuda' | 'mps';
  readonly name: string;
  readonly memoryBytes: number | null;
  readonly count?: number;
}

export interface ServerInfo {
  readonly name: string;
  readonly version: string;
  readonly pid: number;
  readonly device?: DeviceInfo;
}

// -- params and results, one pair per method ----------------------------------------------------

export type EmptyParams = Record<string, never>;

export interface OptionalRunParams {
  /** Default: the live run. */
  readonly runId?: RunId;
}

export interface RunResult {
  readonly run: RunInfo;
}

export interface TipParams {
  readonly runId: RunId;
  readonly tipId: TipId;
}

export interface TipResult {
  readonly tip: Tip;
}

export interface InitializeParams {
  readonly protocolVersion: string;
  readonly clientInfo: ClientInfo;
  readonly capabilities?: ClientCapabilities;
}

export interface InitializeResult {
  readonly protocolVersion: string;
  readonly serverInfo: ServerInfo;
  readonly connection: number;
  readonly capabilities: HostCapabilities;
}

export interface ShutdownResult {
  readonly stoppedRun: RunId | null;
}

export interface PingResult {
  readonly time: number;
}

/** At most one of config, configFile, preset (none: the `builtin` preset). */
export interface RunStartParams {
  readonly config?: Record<string, unknown>;
  readonly configFile?: string;
  readonly preset?: string;
  readonly overrides?: readonly string[];
  readonly name?: RunId;
  readonly root?: string;
  readonly pauseAfterIteration?: number;
}

export interface RunPauseParams {
  readonly runId?: RunId;
  readonly afterIteration?: number;
}

export interface RunResumeParams {
  readonly runId?: RunId;
  readonly overrides?: readonly string[];
  readonly pauseAfterIteration?: number;
}

export interface RunListResult {
  readonly runs: readonly RunInfo[];
  readonly roots: readonly string[];
}

export interface RunOpenParams {
  readonly path: string;
}

export interface RunOpenResult {
  readonly run: RunStatus;
}

export interface RunStatusResult {
  /** Null when no run id was given and no run is live. */
  readonly run: RunStatus | null;
}

export interface RunMetricsParams {
  readonly runId: RunId;
  readonly sinceIteration?: number;
}

export interface RunMetricsResult {
  readonly records: readonly MetricsRecord[];
}

export interface TrajectoryFilter {
  readonly iteration?: number;
  readonly iterationMin?: number;
  readonly iterationMax?: number;
  readonly task?: string;
  readonly variation?: number;
  readonly rolloutMode?: RolloutMode;
  readonly updateMode?: UpdateMode;
  readonly returnMin?: number;
  readonly returnMax?: number;
  readonly success?: boolean;
}

export interface TrajectoryListParams {
  readonly runId: RunId;
  readonly filter?: TrajectoryFilter;
  readonly cursor?: Cursor;
  /** 1..1000, default 100. */
  readonly limit?: number;
}

export interface TrajectoryListResult {
  readonly items: readonly TrajectorySummary[];
  readonly nextCursor: Cursor | null;
  /** Episodes matching the filter, all pages. */
  readonly total: number;
}

export interface TrajectoryGetParams {
  readonly runId: RunId;
  readonly episodeId: EpisodeId;
}

export interface TrajectoryGetResult {
  readonly episode: Episode;
}

export interface MemoryFilter {
  readonly variationKey?: string;
  readonly task?: string;
  readonly author?: 'policy' | 'person';
  readonly includeDeleted?: boolean;
  readonly includeEvicted?: boolean;
}

export interface MemoryListParams {
  readonly runId: RunId;
  readonly filter?: MemoryFilter;
  readonly search?: string;
  readonly cursor?: Cursor;
  readonly limit?: number;
}

export interface MemoryListResult {
  readonly items: readonly Tip[];
  readonly nextCursor: Cursor | null;
  readonly total: number;
}

export interface MemoryAddParams {
  readonly runId: RunId;
  readonly variationKey: string;
  readonly text: string;
  readonly author?: string;
  readonly score?: number;
  readonly keyText?: string;
}

export interface MemoryUpdateParams {
  readonly runId: RunId;
  readonly tipId: TipId;
  readonly text: string;
  /** The version the client read; a stale one is VersionConflict carrying the current tip. */
  readonly expectedVersion: number;
  readonly author?: string;
}

export interface MemoryDeleteParams {
  readonly runId: RunId;
  readonly tipId: TipId;
  readonly expectedVersion: number;
  readonly author?: string;
}

export interface MemoryHistoryResult {
  readonly versions: readonly TipVersion[];
}

export interface CheckpointListParams {
  readonly runId: RunId;
}

export interface CheckpointListResult {
  readonly checkpoints: readonly CheckpointInfo[];
}

// -- notifications ------------------------------------------------------------------------------

export interface RunStateEvent {
  readonly seq: number;
  readonly run: RunInfo;
}

export interface RunProgressEvent {
  readonly seq: number;
  readonly runId: RunId;
  readonly progress: Progress;
}

export interface RunMetricsEvent {
  readonly seq: number;
  readonly runId: RunId;
  readonly records: readonly MetricsRecord[];
}

export interface TrajectoryAddedEvent {
  readonly seq: number;
  readonly runId: RunId;
  readonly summaries: readonly TrajectorySummary[];
}

export interface MemoryChange {
  readonly change: 'added' | 'updated' | 'deleted' | 'evicted';
  readonly tip: Tip;
  readonly by: Author;
}

export interface MemoryChangedEvent {
  readonly seq: number;
  readonly runId: RunId;
  readonly changes: readonly MemoryChange[];
}

export interface LogEntry {
  readonly time: number;
  readonly level: 'DEBUG' | 'INFO' | 'WARNING' | 'ERROR' | 'CRITICAL';
  readonly logger: string;
  readonly message: string;
  readonly runId?: RunId;
}

export interface LogMessageEvent {
  readonly seq: number;
  readonly entries: readonly LogEntry[];
}

export interface ResyncEvent {
  readonly seq: number;
  readonly reason: string;
  readonly dropped: number;
}

// -- reruns and branches (1.1.0) -----------------------------------------------------------------

export type JobId = string;

export interface UpdateRerunParams {
  readonly runId: RunId;
  readonly checkpoint?: number;
  readonly variations?: string[];
  readonly episodes?: number;
  readonly iterations?: number;
  readonly evalEpisodes?: number;
  readonly heldOut?: number;
  readonly seed?: number;
  readonly dryRun?: boolean;
  readonly name?: string;
}

export interface UpdateRerunResult {
  readonly jobId: JobId;
  readonly runId: RunId;
  /** The branch the rerun writes; null for a dry run. */
  readonly branchId: RunId | null;
  readonly dryRun: boolean;
}

export interface UpdateCancelParams {
  readonly jobId: JobId;
}

export interface UpdateCancelResult {
  readonly cancelled: boolean;
}

/** rerun.json's result or a dry-run report, in the run folder's snake_case (src/rerun/comparison.ts reads it). */
export interface RerunResult {
  readonly dry_run: boolean;
  readonly variations: readonly string[];
  readonly status?: string;
  readonly [field: string]: unknown;
}

export interface UpdateCompareParams {
  readonly runId: RunId;
}

export interface UpdateCompareResult {
  readonly result: RerunResult;
}

export interface BranchParams {
  readonly runId: RunId;
}

export interface BranchDeleteResult {
  readonly deleted: RunId;
}

export interface UpdateProgressEvent {
  readonly seq: number;
  readonly jobId: JobId;
  readonly runId: RunId;
  readonly progress: Progress;
}

export interface UpdateFinishedEvent {
  readonly seq: number;
  readonly jobId: JobId;
  readonly runId: RunId;
  readonly branchId: RunId | null;
  readonly dryRun: boolean;
  readonly status: 'finished' | 'stopped' | 'failed';
  readonly error?: string;
  readonly result?: RerunResult;
}

// -- errors -------------------------------------------------------------------------------------

/** Every error code of the schema's ErrorCode, by its title. */
export const ErrorCodes = {
  ParseError: -32700,
  InvalidRequest: -32600,
  MethodNotFound: -32601,
  InvalidParams: -32602,
  InternalError: -32603,
  NotInitialized: -32002,
  ProtocolVersionMismatch: -32003,
  RateLimited: -32004,
  ShuttingDown: -32005,
  RunNotFound: -32010,
  RunBusy: -32011,
  PathNotAllowed: -32012,
  ConfigInvalid: -32013,
  RunStateInvalid: -32014,
  RunExists: -32015,
  RerunInvalid: -32016,
  EpisodeNotFound: -32020,
  TipNotFound: -32021,
  VersionConflict: -32022,
} as const;

export type ErrorCode = (typeof ErrorCodes)[keyof typeof ErrorCodes];

export interface VersionConflictData {
  readonly tip: Tip;
}
