import type { RunEntry } from '../runs/runsModel';

// The run guard's words and decisions, pure (unit-tested without VS Code).

export const PAUSE_FIRST = 'Pause After This Iteration';
export const NOW = 'Now';
export const RESUME = 'Resume';

/** empo2.resumeAfterRestart: what happens to the run a Stop/Restart Host interrupted. */
export type ResumeSetting = 'resume' | 'ask' | 'never';

export interface StopQuestion {
  readonly message: string;
  readonly detail: string;
  /** Paused at an iteration boundary: stopping loses nothing, so no question is asked. */
  readonly alreadyPaused: boolean;
}

/** What to ask before stopping or restarting a host whose run `live` trains; none if idle. */
export function stopQuestion(action: 'stop' | 'restart', live: RunEntry): StopQuestion | undefined {
  const { info, progress } = live;
  if (!info.live || !['starting', 'running', 'pausing', 'paused'].includes(info.state)) {
    return undefined;
  }
  const total = info.iterations ? ` of ${info.iterations}` : '';
  const current = progress?.iteration ?? info.iteration + 1;
  const verb = action === 'restart' ? 'Restart' : 'Stop';
  const after = action === 'restart' ? 'When the host is back, the run resumes (setting: EMPO²: Resume After Restart).' : 'Resume it later with EMPO²: Resume Run.';
  return {
    alreadyPaused: info.state === 'paused',
    message: `${info.runId} is training iteration ${current}${total}. ${verb} the host?`,
    detail:
      `"${PAUSE_FIRST}" lets iteration ${current} finish first, so nothing is lost. ` +
      `"${NOW}" stops at once: iteration ${current} is dropped and the run later continues from iteration ${info.iteration}. ${after}`,
  };
}

/** After a host came back: resume the interrupted run, ask, leave it, or wait for its entry. */
export function resumeDecision(entry: RunEntry | undefined, setting: ResumeSetting): 'resume' | 'ask' | 'leave' | 'wait' {
  if (!entry) {
    return 'wait'; // the new host has not listed it yet
  }
  if (entry.info.live) {
    return 'leave'; // someone resumed it already
  }
  if (entry.info.state !== 'interrupted' && entry.info.state !== 'paused' && entry.info.state !== 'running') {
    return 'leave'; // it finished or stopped in the meantime
  }
  return setting === 'never' ? 'leave' : setting;
}
