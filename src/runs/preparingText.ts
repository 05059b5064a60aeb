import type { Progress } from '../rpc/protocol';

// What a starting run's notification says while the host prepares it: loading the policy, or
// building the built-in one (the host's `preparing` progress counts the whole build's optimizer
// steps), with an estimate of the time left from the rate seen so far.

/** Seconds left at the rate observed since the first sample; undefined until it has moved. */
export class RateEstimate {
  private first: { readonly done: number; readonly at: number } | undefined;

  secondsLeft(done: number, total: number, nowMs: number): number | undefined {
    if (!this.first || done < this.first.done) {
      this.first = { done, at: nowMs }; // a new count (a rebuild) starts a new estimate
      return undefined;
    }
    const moved = done - this.first.done;
    const elapsed = (nowMs - this.first.at) / 1000;
    if (moved <= 0 || elapsed <= 0) {
      return undefined;
    }
    return (Math.max(0, total - done) * elapsed) / moved;
  }
}

/** "about 40 s", "about 4 min", "about 1 h 5 min": coarse, as an estimate is. */
export function formatSecondsLeft(seconds: number): string {
  if (seconds < 60) {
    return `about ${Math.max(5, Math.round(seconds / 5) * 5)} s`;
  }
  const minutes = Math.round(seconds / 60);
  if (minutes < 60) {
    return `about ${minutes} min`;
  }
  return `about ${Math.floor(minutes / 60)} h ${minutes % 60} min`;
}

/** The notification's line for a starting run with the host's latest progress. */
export function preparingText(progress: Progress | null | undefined, secondsLeft: number | undefined): string {
  if (!progress || progress.phase !== 'preparing' || progress.total <= 0) {
    return 'loading the policy';
  }
  const left = secondsLeft === undefined ? '' : `, ${formatSecondsLeft(secondsLeft)} left`;
  return `building the built-in policy (once): step ${progress.done} of ${progress.total}${left}`;
}

/** The share of the build done, in percent (the notification's bar), 0 while only loading. */
export function preparingPercent(progress: Progress | null | undefined): number {
  if (!progress || progress.phase !== 'preparing' || progress.total <= 0) {
    return 0;
  }
  return Math.min(100, (100 * progress.done) / progress.total);
}
