import type {
  BranchRerunResult,
  Episode,
  MetricsRecord,
  RunInfo,
  RunStatus,
  Tip,
  TipVersion,
  TrajectoryStep,
  TrajectorySummary,
} from '../../src/rpc/protocol';

// Test-data builders for protocol records: every field has a default that passes the schema, a
// test names only what it is about (STYLE.md rule 10).

export function aRunInfo(fields: Partial<RunInfo> = {}): RunInfo {
  return {
    runId: 'run-1',
    path: '/home/ada/project/.empo2/runs/run-1',
    state: 'finished',
    iteration: 2,
    iterations: 2,
    live: false,
    updated: 1_700_000_000,
    ...fields,
  };
}

export function aRunStatus(fields: Partial<RunStatus> = {}): RunStatus {
  return {
    ...aRunInfo(fields),
    config: { env: { name: 'builtin', tasks: ['power-device'] } },
    latestMetrics: null,
    checkpoints: [],
    progress: null,
    pauseAfterIteration: null,
    episodes: 0,
    ...fields,
  };
}

export function anEpisodeId(iteration: number, index: number): string {
  return `i${String(iteration).padStart(6, '0')}-e${String(index).padStart(4, '0')}`;
}

export function aSummary(fields: Partial<TrajectorySummary> = {}): TrajectorySummary {
  const iteration = fields.iteration ?? 1;
  return {
    id: anEpisodeId(iteration, 0),
    iteration,
    task: 'power-device',
    variation: 0,
    group: 0,
    rollout_mode: 'memory-free',
    update_mode: 'on-policy',
    return: 0,
    success: false,
    steps: 2,
    intrinsic: 0.5,
    tip_id: null,
    ...fields,
  };
}

export function aStep(fields: Partial<TrajectoryStep> = {}): TrajectoryStep {
  return {
    t: 0,
    observation: 'you are in the hallway .',
    prompt: 'task : turn on the lamp . now : you are in the hallway .',
    prompt_no_tips: 'task : turn on the lamp . now : you are in the hallway .',
    tips: [],
    tip_ids: [],
    action: 'look around',
    executed_action: 'look around',
    action_ids: [5, 6],
    behaviour_logprobs: [-0.5, -0.25],
    reward: 0,
    intrinsic: 1,
    score: 0,
    next_observation: 'you are in the hallway .',
    ...fields,
  };
}

export function anEpisode(fields: Partial<Episode> = {}): Episode {
  const summary = aSummary(fields as Partial<TrajectorySummary>);
  return {
    ...summary,
    steps: [aStep({ t: 0 }), aStep({ t: 1, action: 'go to kitchen', reward: 1 })],
    description: 'turn on the lamp in the kitchen .',
    tip: 'the lamp is in the kitchen ; go there first .',
    ...fields,
  };
}

export function aTip(fields: Partial<Tip> = {}): Tip {
  return {
    id: 't000001',
    variationKey: 'power-device/0',
    text: 'look in the shed before the kitchen',
    version: 1,
    deleted: false,
    evicted: false,
    author: 'policy',
    versionAuthor: 'policy',
    provenance: { run: 'run-1', iteration: 1, episode: 'i000001-e0000', step: 2, score: 0 },
    score: 0,
    entries: 2,
    created: '2026-01-01T00:00:00+00:00',
    updated: '2026-01-01T00:00:00+00:00',
    ...fields,
  };
}

export function aTipVersion(fields: Partial<TipVersion> = {}): TipVersion {
  return {
    version: 1,
    text: 'look in the shed',
    author: 'policy',
    kind: 'add',
    at: '2026-01-01T00:00:00+00:00',
    ...fields,
  };
}

/** A finished rerun on branch `what-if` of `run-1`, as `update.compare` returns it. */
export function aBranchRerunResult(fields: Partial<BranchRerunResult> = {}): BranchRerunResult {
  return {
    format: 1,
    dry_run: false,
    status: 'finished',
    branch: 'what-if',
    path: '/home/ada/project/.empo2/runs/what-if',
    parent: 'run-1',
    checkpoint: 2,
    iteration: 3,
    variations: ['power-device/3'],
    settings: {
      checkpoint: 2,
      variations: ['power-device/3'],
      episodes: 8,
      iterations: 1,
      eval_episodes: 8,
      held_out: 0,
      seed: 0,
      dry_run: false,
    },
    comparison: [
      { variation: 'power-device/3', chosen: true, before: 0.25, after: 0.5, score_before: 10, score_after: 40 },
    ],
    episodes: [
      {
        id: 'i000003-e0000',
        variation: 'power-device/3',
        success: true,
        return: 100,
        tip_guided_steps: 4,
        tokens: 18,
        logprob_before: -71.5,
        logprob_after: -70.7,
      },
    ],
    tips: [
      {
        tip_id: 't000001',
        kind: 'update',
        variation_key: 'power-device/3',
        author: 'you',
        at: '2026-01-01T00:00:00+00:00',
        before: 'look in the shed',
        after: 'the battery is in the drawer',
      },
    ],
    updates: [{ iteration: 3, loss: 0.015, masked_fraction: 0.38 }],
    kl_to_checkpoint: 0.026,
    ...fields,
  };
}

export function aMetricsRecord(
  fields: Partial<Record<string, number | string | boolean | null>> & { iteration?: number } = {},
): MetricsRecord {
  return {
    iteration: 1,
    time: 1_700_000_000,
    rollout_mode: 'memory-free',
    update_mode: 'on-policy',
    'rollout/return': 0.25,
    'rollout/success': 0.25,
    'rollout/memory_free/return': 0.25,
    'rollout/memory_free/success': 0.25,
    'memory/tips': 4,
    'reward/intrinsic': 0.3,
    'update/entropy': 3.1,
    'update/clip_fraction': 0.05,
    ...fields,
  } as MetricsRecord;
}
