import type { RunEntry } from './runsModel';

// How a run's position reads, in one place, so the status bar and the progress item beside it
// never disagree: while an iteration runs both name the iteration in progress (the progress
// notification's), otherwise the last completed one, with the state when it is not training.

/** States in which a run's iteration is moving: a spinner and a progress item are honest. */
export const MOVING_STATES: readonly string[] = ['starting', 'running', 'pausing', 'stopping'];

export function isMoving(entry: RunEntry): boolean {
  return entry.info.live && MOVING_STATES.includes(entry.info.state);
}

/**
 * "iteration 5/40: rollout 4/15" (long) or "iter 5/40 rollout" (short); the one-step phases
 * (reflection, update, evaluation) without a count; paused and interrupted runs say so.
 */
export function iterationText(entry: RunEntry, short = false): string {
  const { info, progress } = entry;
  const total = info.iterations ? `/${info.iterations}` : '';
  const word = short ? 'iter' : 'iteration';
  if (isMoving(entry) && progress) {
    const pausing = info.state === 'pausing' ? ' (pausing after it)' : '';
    return short
      ? `${word} ${progress.iteration}${total} ${progress.phase}${info.state === 'pausing' ? ', pausing' : ''}`
      : `${word} ${progress.iteration}${total}: ${progress.phase}${progress.total > 1 ? ` ${progress.done}/${progress.total}` : ''}${pausing}`;
  }
  if (info.state === 'paused' || info.state === 'interrupted' || info.state === 'stopped') {
    return `${info.state} after ${word} ${info.iteration}${total}`;
  }
  return `${info.state}, ${word} ${info.iteration}${total}`;
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

/** The resume confirmation, in plain words (unit-tested). */
export function resumeQuestion(runId: string, iteration: number): string {
  return `EMPO²: resume training ${runId}? It continues after iteration ${iteration}, its last saved checkpoint. Anything recorded after that checkpoint (an iteration that did not finish) is removed and trained again.`;
}
