import type { HostStopAction } from '../host/hostCommands';
import type { RunEntry } from '../runs/runsModel';
import { continuesWith } from '../runs/runText';

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

/** What to ask before stopping, restarting or leaving (for a remote host) a host whose run `live` trains; none if idle. */
export function stopQuestion(action: HostStopAction, live: RunEntry): StopQuestion | undefined {
  const { info, progress } = live;
  if (!info.live || !['starting', 'running', 'pausing', 'paused'].includes(info.state)) {
    return undefined;
  }
  const total = info.iterations ? ` of ${info.iterations}` : '';
  const current = progress?.iteration ?? info.iteration + 1;
  return {
    alreadyPaused: info.state === 'paused',
    message: `${info.runId} is training iteration ${current}${total}. ${ASK[action]}`,
    detail:
      `"${PAUSE_FIRST}" lets iteration ${current} finish first, so nothing is lost. ` +
      `"${NOW}" stops at once: iteration ${current} is dropped, and when the run is resumed ${continuesWith(info.iteration)}. ${AFTER[action]}`,
  };
}

const ASK: Record<HostStopAction, string> = {
  restart: 'Restart the host?',
  stop: 'Stop the host?',
  connect: 'Stop the local host and connect to the remote one?',
};

const AFTER: Record<HostStopAction, string> = {
  restart: 'When the host is back, the run resumes (setting: EMPO²: Resume After Restart).',
  stop: 'Resume it later with EMPO²: Resume Run.',
  connect: 'The run stays on this machine; resume it later on a local host with EMPO²: Resume Run.',
};

/** After a host came back: resume the interrupted run, ask, leave it, or wait for its entry. */
export function resumeDecision(
  entry: RunEntry | undefined,
  setting: ResumeSetting,
): 'resume' | 'ask' | 'leave' | 'wait' {
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
