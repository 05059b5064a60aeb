import type { CheckpointInfo, MetricsRecord, Tip } from '../rpc/protocol';
import { isPersonAuthor } from '../tips/tipRules';

// The rerun wizard's steps and the words of its picks, pure (unit-tested without VS Code). Every
// question the wizard asks is a step here, so its "(n/N)" counts them all.

export const RERUN_TITLE = 'EMPO²: Rerun Off-Policy Update';

const STEPS = [
  'checkpoint',
  'variations',
  'N, rollouts per variation',
  'K, update iterations',
  'dry run or rerun',
] as const;
export type RerunStep = (typeof STEPS)[number];

/** "EMPO²: Rerun Off-Policy Update (2/5): variations", and `more` after it. */
export function stepTitle(step: RerunStep, more = ''): string {
  return `${RERUN_TITLE} (${STEPS.indexOf(step) + 1}/${STEPS.length}): ${step}${more}`;
}

/** The checkpoint pick's placeholder: the run keeps only its newest checkpoints, and the one
 *  before a person's edits that no rerun has seen (training/checkpoint.py in the host). */
export function checkpointPlaceholder(checkpoints: readonly CheckpointInfo[]): string {
  const oldest = Math.min(...checkpoints.map((c) => c.iteration));
  return oldest > 0
    ? `The branch starts from this checkpoint (the run keeps only these: its newest, and the one before edits no rerun has seen; the ones before iteration ${oldest} are gone)`
    : 'The branch starts from this checkpoint';
}

/**
 * The checkpoint the pick proposes: the newest one with a person's edit after it, so that the
 * edits are what the rerun tries (a checkpoint taken after them would count them as old); the
 * newest checkpoint when no edit follows any. `editedAfter` gives the variations a person
 * edited after a checkpoint (undefined: unknown).
 */
export function proposedCheckpoint(
  iterations: readonly number[],
  editedAfter: (iteration: number) => ReadonlySet<string> | undefined,
): number {
  const newestFirst = [...iterations].sort((a, b) => b - a);
  return newestFirst.find((iteration) => (editedAfter(iteration)?.size ?? 0) > 0) ?? newestFirst[0];
}

/** A checkpoint's line in the pick: latest, and how many variations a person edited after it. */
export function checkpointDescription(latest: boolean, edited: ReadonlySet<string> | undefined): string | undefined {
  const parts = [
    latest ? 'latest' : '',
    edited?.size ? `before your edits to ${edited.size} variation${edited.size === 1 ? '' : 's'}` : '',
  ].filter(Boolean);
  return parts.length ? parts.join(' · ') : undefined;
}

/** The host's metrics key for the wall-clock time a line was written (Unix seconds). */
const WRITTEN_AT = 'time';

/**
 * When checkpoint `iteration` was taken, in Unix seconds: 0 for the run's start (checkpoint 0),
 * else when its iteration's metrics line was written (just before the checkpoint itself);
 * undefined when that line is missing.
 */
export function checkpointTime(iteration: number, records: readonly MetricsRecord[]): number | undefined {
  if (iteration === 0) {
    return 0;
  }
  const at = records.find((r) => r.iteration === iteration)?.[WRITTEN_AT];
  return typeof at === 'number' ? at : undefined;
}

/**
 * The variations whose tips a person edited (added, changed or deleted) after the checkpoint
 * taken at `since` (Unix seconds): what the host reruns when no variation is named. The host
 * reads its memory log for it; here the tips' current versions tell, which misses a person's edit
 * that the policy rewrote afterwards (the host still counts that one).
 */
export function editedSince(tips: readonly Tip[], since: number): Set<string> {
  return new Set(
    tips
      .filter((t) => isPersonAuthor(t.versionAuthor))
      .filter((t) => {
        const at = Date.parse(t.updated ?? t.created ?? '');
        return Number.isNaN(at) || at / 1000 > since; // an edit of unknown time: shown rather than hidden
      })
      .map((t) => t.variationKey),
  );
}

/** The variations pick's placeholder, and each variation's note, for checkpoint `iteration`. */
export function variationsWording(
  iteration: number,
  edited: ReadonlySet<string> | undefined,
): { placeholder: string; note: string } {
  const after = iteration === 0 ? 'since the run started' : `after iteration ${iteration}`;
  if (!edited) {
    return { placeholder: `None picked: the host takes the variations whose tips a person edited ${after}`, note: '' };
  }
  return {
    placeholder: edited.size
      ? `Ticked: the variations whose tips a person edited ${after} (what the host takes when none is picked)`
      : `No tip was edited by a person ${after}: pick the variations to rerun`,
    note: `tips edited by a person ${after}`,
  };
}
