import { preparingText } from './preparingText';
import { trainedElsewhere, type RunEntry } from './runsModel';

// How a run's position reads, in one place, so the status bar and the progress item beside it
// never disagree: while an iteration runs both name the iteration in progress (the progress
// notification's), otherwise the last completed one, with the state when it is not training.

/** States in which a run's iteration is moving: a spinner and a progress item are honest. */
export const MOVING_STATES: readonly string[] = ['starting', 'running', 'pausing', 'stopping'];

export function isMoving(entry: RunEntry): boolean {
  return entry.info.live && MOVING_STATES.includes(entry.info.state);
}

/** What a counting phase is doing, as the long text names it before its done/total. */
const COUNTED: Partial<Record<string, string>> = {
  rollout: 'rollout step ',
  reflection: 'writing tip ',
  storing: 'storing tips ',
  update: 'update step ',
};

/**
 * "iteration 5/40: rollout step 4/15" (long; a rollout counts env steps, the tree's row its
 * episodes; a reflection the tips written, "writing tip 3/8"; storing the tips stored, "storing
 * tips 3/8"; an update its optimizer steps, "update step 2/9") or "iter 5/40 rollout" (short);
 * a phase the host does not count (novelty, evaluation) by its name; paused and interrupted runs
 * say so; a run another process trains names the iteration that process is in, as its
 * progress.json says ("iter 5/40 rollout elsewhere").
 */
export function iterationText(entry: RunEntry, short = false): string {
  const { info, progress } = entry;
  // A branch's config is its parent's: "4/40" would read as a run 36 iterations short of its
  // end, where a rerun ends at its checkpoint plus K. An adopted branch trains as a run.
  const rerun = info.parent !== undefined && info.parent !== null && !info.parent.adopted;
  const total = info.iterations && !rerun ? `/${info.iterations}` : '';
  const word = short ? 'iter' : 'iteration';
  if (isMoving(entry) && progress) {
    const pausing = info.state === 'pausing' ? ' (pausing after it)' : '';
    return short
      ? `${word} ${progress.iteration}${total} ${progress.phase}${info.state === 'pausing' ? ', pausing' : ''}`
      : `${word} ${progress.iteration}${total}: ${doing(progress, '/')}${pausing}`;
  }
  if (trainedElsewhere(info)) {
    // The iteration its trainer is in, from the progress.json the host follows; before the
    // first one, the last iteration written.
    const ahead = aheadOfWritten(progress, info.iteration);
    if (ahead) {
      return short
        ? `${word} ${ahead.iteration}${total} ${ahead.phase} elsewhere`
        : `${word} ${ahead.iteration}${total}: ${doing(ahead, '/')} in another process`;
    }
    return short
      ? `${info.state} elsewhere, ${word} ${info.iteration}${total}`
      : `${info.state} in another process, ${word} ${info.iteration}${total}`;
  }
  if (info.state === 'paused' || info.state === 'interrupted' || info.state === 'stopped') {
    return `${info.state} after ${word} ${info.iteration}${total}`;
  }
  return `${info.state}, ${word} ${info.iteration}${total}`;
}

/**
 * What a run that trains waits for before its iteration row can show, or undefined: it builds
 * the built-in policy (run/progress "preparing", step of steps), loads the policy (state
 * `starting`), or plays an iteration's episodes, none ended yet (the iteration's first
 * trajectory/progress brings its row). The Trajectories tree shows it as a row under the run,
 * where the iteration in progress will show.
 */
export function waitingText(
  entry: RunEntry,
  iterations = Math.max(entry.info.iteration, entry.trajectoryIteration),
): string | undefined {
  const { info, progress } = entry;
  if (!isMoving(entry)) {
    return trainedElsewhere(info) ? elsewhereText(progress, iterations) : undefined;
  }
  if (iterations > 0) {
    // A later iteration has begun its rollout and none of its episodes has ended: its row is
    // not there yet, so this one stands where it will show (the rows go newest first).
    if (progress?.phase === 'rollout' && progress.iteration > iterations) {
      const steps = progress.total > 1 ? `: step ${progress.done} of ${progress.total}` : '';
      return `Iteration ${progress.iteration}: waiting for its first episode (rollout${steps})…`;
    }
    return undefined;
  }
  if (info.state === 'starting') {
    // In the starting notification's words; built (done = total), the policy still loads
    // before the run says `running`.
    const built = progress?.phase === 'preparing' && progress.done >= progress.total;
    const line = built ? preparingText(null, undefined) : preparingText(progress, undefined);
    return `${line[0].toUpperCase()}${line.slice(1)}…`;
  }
  // A `preparing` progress outlives the start (no progress comes until the rollout's first step).
  const phase = progress && progress.phase !== 'preparing' ? progress : undefined;
  if (phase && phase.phase !== 'rollout') {
    return `Waiting for the first iteration (${phase.phase})…`;
  }
  const steps = phase && phase.total > 1 ? `: step ${phase.done} of ${phase.total}` : '';
  return `Waiting for the first episode (rollout${steps})…`;
}

/**
 * Where a run another process trains is within the iteration it has not written yet (its
 * progress.json, which the host follows): its episodes come only with the written iteration, so
 * this row stands for the whole iteration, not just its first episode.
 */
function elsewhereText(progress: RunEntry['progress'], iterations: number): string | undefined {
  const ahead = aheadOfWritten(progress, iterations);
  return (
    ahead &&
    `Iteration ${ahead.iteration}: ${doing(ahead, ' of ')} in another process; its episodes show once it is written…`
  );
}

type Progress = NonNullable<RunEntry['progress']>;

/** Another process's progress when it is in an iteration later than the `written` ones; none
 *  before its first progress.json, while it prepares, or once that iteration is written. */
function aheadOfWritten(progress: RunEntry['progress'], written: number): Progress | undefined {
  return progress && progress.phase !== 'preparing' && progress.iteration > written ? progress : undefined;
}

/** "rollout step 4/15" (or "rollout step 4 of 15"): what a phase is doing and how far it is, or
 *  its name alone when it counts one thing; a phase this client does not know, by its name. */
function doing(progress: Progress, of: string): string {
  if (progress.total <= 1) {
    return progress.phase;
  }
  return `${COUNTED[progress.phase] ?? `${progress.phase} `}${progress.done}${of}${progress.total}`;
}

/** The codicon of a run's state in the status bar: only a moving run spins. */
export function runIcon(entry: RunEntry): string {
  switch (entry.info.state) {
    case 'paused':
    case 'pausing':
      return '$(debug-pause)';
    case 'interrupted':
      return '$(debug-disconnect)';
    default:
      return isMoving(entry) ? '$(sync~spin)' : '$(pulse)';
  }
}

/**
 * Where a run stopped after `iteration` finished iterations picks up, as one clause: the
 * iteration that runs next, and the checkpoint it starts from (the resume and the Stop/Restart
 * Host questions say it the same way).
 */
export function continuesWith(iteration: number): string {
  return iteration > 0
    ? `it continues with iteration ${iteration + 1} (after iteration ${iteration}, its last checkpoint)`
    : 'it continues with iteration 1 (from the start: no iteration has finished)';
}

/** The resume confirmation, in plain words (unit-tested). */
export function resumeQuestion(runId: string, iteration: number): string {
  const clause = continuesWith(iteration);
  return `EMPO²: resume training ${runId}? ${clause[0].toUpperCase()}${clause.slice(1)}. What an unfinished iteration recorded since then is removed and trained again.`;
}
