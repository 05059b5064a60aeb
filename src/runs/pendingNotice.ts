import type { Event } from '../common/event';
import type { IDisposable } from '../common/lifecycle';
import type { RunEntry } from './runsModel';

// The status bar message Pause and Stop leave ("builtin-1 pauses after its current iteration"):
// it says what the run will do, so it goes as soon as the run has done it (paused, stopped) or
// moved on otherwise; the status bar item beside it shows the new state. At most `timeoutMs`.

/** A state in which a run has been asked to change and has not yet: the message applies. */
const PENDING_STATES: readonly string[] = ['pausing', 'stopping'];

export interface PendingNoticeDeps {
  readonly onDidChangeRun: Event<RunEntry>;
  /** Shows the message; disposing the result hides it (vscode.window.setStatusBarMessage). */
  readonly show: (text: string, timeoutMs: number) => IDisposable;
}

export function showPendingNotice(
  { onDidChangeRun, show }: PendingNoticeDeps,
  runId: string,
  state: string,
  text: string,
  timeoutMs = 5_000,
): void {
  if (!PENDING_STATES.includes(state)) {
    return; // already done (a run between iterations pauses at once): the state says it all
  }
  const message = show(text, timeoutMs);
  const done = () => {
    clearTimeout(timer);
    subscription.dispose();
    message.dispose();
  };
  const subscription = onDidChangeRun((entry) => entry.info.runId === runId && entry.info.state !== state && done());
  const timer = setTimeout(done, timeoutMs);
}
