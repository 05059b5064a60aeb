import type { RunEntry } from './runsModel';

// The context keys `when` clauses in package.json read (palette, view toolbars, context menus),
// as a pure function of the runs, so Pause is offered only where a run can pause and Resume
// where Pause was. Keys: empo2.liveRunState (the state of the run this host trains, or `none`)
// and empo2.runState (the current run's: the selected one, else the live one).

export const NO_RUN = 'none';

export function runContext(
  live: RunEntry | undefined,
  current: RunEntry | undefined,
): Record<string, string | boolean> {
  return {
    'empo2.runLive': live !== undefined,
    'empo2.liveRunState': live?.info.state ?? NO_RUN,
    'empo2.runState': current?.info.state ?? NO_RUN,
  };
}

/** A tree row's contextValue: `empo2.run.live.<state>` or `empo2.run.<state>`; a branch run
 *  that is not live ends in `.branch` (Compare with Parent, Adopt and Delete Branch). */
export function runContextValue(entry: RunEntry): string {
  const branch = entry.info.parent && !entry.info.live ? '.branch' : '';
  return `empo2.run.${entry.info.live ? 'live.' : ''}${entry.info.state}${branch}`;
}
