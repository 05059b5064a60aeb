import type { UpdateRerunParams } from '../rpc/protocol';
import type { RunEntry } from '../runs/runsModel';

// Whether "Rerun Off-Policy Update…" can run now, judged before its first question, so that no
// one answers four steps to be told "stop it first". A rerun or dry run loads a model of its own:
// the host takes one while no run trains, or beside a run paused at its iteration boundary (the
// paused run stays paused and untouched). A run that trains is in the way; so is another rerun.
// No vscode import (unit-tested as it is); rerunGateDialog.ts asks and clears the way.

export const PAUSE_AND_RERUN = 'Pause After This Iteration and Rerun';
export const STOP_AND_RERUN = 'Stop the Run and Rerun';

export type RerunWayOut = typeof PAUSE_AND_RERUN | typeof STOP_AND_RERUN;

/** What stands in the way of a rerun, in words, with the ways out it has. */
export interface RerunObstacle {
  readonly message: string;
  readonly detail: string;
  /** Buttons that clear the way and go on with the rerun; none: only waiting helps. */
  readonly wayOut: readonly RerunWayOut[];
}

/** The obstacle, if any: `live` is the run the host trains, `job` the rerun this window runs. */
export function rerunObstacle(
  live: RunEntry | undefined,
  job: UpdateRerunParams | undefined,
): RerunObstacle | undefined {
  if (job) {
    return {
      message: `${job.dryRun ? 'A dry run' : 'A rerun'} of ${job.runId} is in progress; the host runs one at a time.`,
      detail: 'Start this one when it has finished, or cancel it in its progress notification.',
      wayOut: [],
    };
  }
  if (!live?.info.live || live.info.state === 'paused') {
    return undefined;
  }
  const { runId, state } = live.info;
  if (state === 'stopping') {
    return {
      message: `${runId} is stopping; rerun once it has stopped.`,
      detail: 'It stops at its next iteration boundary.',
      wayOut: [],
    };
  }
  const iteration = live.progress?.iteration ?? live.info.iteration + 1;
  const training =
    state === 'pausing' ? `is finishing iteration ${iteration} before it pauses` : `is training iteration ${iteration}`;
  return {
    message: `${runId} ${training}. A rerun starts while no run trains, or beside a paused one.`,
    detail:
      `"${PAUSE_AND_RERUN}" lets iteration ${iteration} finish and keeps ${runId} paused, untouched, while the rerun runs on its own branch; resume it afterwards. ` +
      `"${STOP_AND_RERUN}" stops ${runId} at its next iteration boundary; "Resume Run" continues it later.`,
    wayOut: [PAUSE_AND_RERUN, STOP_AND_RERUN],
  };
}
