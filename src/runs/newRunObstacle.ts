import type { RunEntry } from './runsModel';

// Whether "New Training Run" can start a run now, judged before its first question. The host
// trains one run at a time, and a paused run still holds that slot (a rerun may run beside a
// paused run; a new run may not): the live run has to stop first, whatever its state. No vscode
// import (unit-tested as it is); runCommands.ts asks and stops it.

export const STOP_AND_START = 'Stop It and Start a New Run';

/** What stands in the way of a new run, in words, and whether stopping the live run clears it. */
export interface NewRunObstacle {
  readonly message: string;
  readonly detail: string;
  /** False while the live run is stopping already: only waiting helps. */
  readonly canStop: boolean;
}

/** The obstacle, if any: `live` is the run the host trains (paused, pausing, running, ...). */
export function newRunObstacle(live: RunEntry | undefined): NewRunObstacle | undefined {
  if (!live?.info.live) {
    return undefined;
  }
  const { runId, state } = live.info;
  if (state === 'stopping') {
    return {
      message: `${runId} is stopping; start a new run once it has stopped.`,
      detail: 'It stops at its next iteration boundary.',
      canStop: false,
    };
  }
  const doing =
    state === 'paused'
      ? 'is paused'
      : state === 'pausing'
        ? 'is finishing its iteration before it pauses'
        : 'is training';
  return {
    message: `${runId} ${doing}. The host trains one run at a time, and a paused run keeps its place: stop ${runId} to start a new run.`,
    detail: `"${STOP_AND_START}" stops ${runId} at its iteration boundary (at once when paused), then asks which run to start. "Resume Run" continues ${runId} later from its last checkpoint.`,
    canStop: true,
  };
}
