import type { RunInfo } from '../rpc/protocol';

// What empo2.autoStartRun does when a window opens, decided from the runs the host lists and the
// run it started the last time in this workspace. A window opened again for the same request and
// launch (a reload, a second browser tab on one `scripts/vscode-open.sh --train`) goes on with
// that run instead of starting one more: a reload shuts the old window's host down, which leaves
// its run interrupted, and a tab closed without a reload keeps its host training for a while.
// Another launch (the script run again) starts a new run, as it says it does.

/** The run empo2.autoStartRun started, and the request it started it for (autoStartRequest). */
export interface AutoStarted {
  readonly request: string;
  readonly runId: string;
}

export type AutoStartStep =
  /** A run trains already, on this host or another process: show it, start nothing. */
  | { readonly kind: 'show'; readonly runId: string }
  /** The run started for this request was cut off with its host: resume it from its checkpoint. */
  | { readonly kind: 'resume'; readonly runId: string }
  | { readonly kind: 'start' };

/** States of a run that another process holds and trains (its host outlived its window). */
const HELD_ELSEWHERE: readonly string[] = ['starting', 'running', 'pausing', 'paused', 'stopping'];

export function autoStartStep(
  request: string,
  previous: AutoStarted | undefined,
  runs: readonly RunInfo[],
): AutoStartStep {
  const live = runs.find((run) => run.live);
  if (live) {
    return { kind: 'show', runId: live.runId };
  }
  const earlier = previous?.request === request ? runs.find((run) => run.runId === previous.runId) : undefined;
  if (earlier?.state === 'interrupted') {
    return { kind: 'resume', runId: earlier.runId };
  }
  if (earlier && HELD_ELSEWHERE.includes(earlier.state)) {
    return { kind: 'show', runId: earlier.runId };
  }
  // Finished, stopped by its user, failed, gone, or never started here: a new run.
  return { kind: 'start' };
}

/** What one auto-started run answers: the preset or config file, in one launch (empty: any). */
export function autoStartRequest(run: string, launch: string): string {
  return launch ? `${run} (launch ${launch})` : run;
}

/** A value read back (autoStartRecord.ts), if it is one this module's caller wrote. */
export function readAutoStarted(value: unknown): AutoStarted | undefined {
  const v = value as Partial<AutoStarted> | undefined;
  return typeof v?.request === 'string' && typeof v.runId === 'string'
    ? { request: v.request, runId: v.runId }
    : undefined;
}
