import { Disposable } from '../common/lifecycle';
import type { HostApi } from '../host/hostApi';
import type { RunsModel } from '../runs/runsModel';
import { resumeDecision, type ResumeSetting } from './runGuardText';

// When to resume the run a Stop/Restart Host interrupted: on the host that comes back, never on
// the one going away. The old host reports the run "interrupted" while it shuts down, and its
// connection is still open then; a resume sent to it dies with it ("the client was disposed").
// So the interruption remembers the connection it happened on and waits for another one. No
// vscode import: the questions and the resume itself are handed in (runGuard.ts), so the unit
// tests drive this with a fake host.

/** What the guard does once a new host lists the interrupted run. */
export interface ResumeActions {
  readonly setting: () => ResumeSetting;
  /** Asks whether to resume (the setting "ask"); true: resume. */
  readonly ask: (runId: string, iteration: number) => Promise<boolean>;
  readonly resume: (runId: string) => Promise<unknown>;
  readonly failed: (runId: string, error: unknown) => void;
}

export class ResumeAfterRestart extends Disposable {
  /** The interrupted run, and the connection it was interrupted on. */
  private pending: { readonly runId: string; readonly on: HostApi['current'] } | undefined;

  constructor(
    private readonly host: HostApi,
    private readonly runs: RunsModel,
    private readonly actions: ResumeActions,
  ) {
    super();
    this._register(runs.onDidChangeRuns(() => void this.check()));
  }

  /** A Stop/Restart Host of ours is about to interrupt `runId` on the connected host. */
  interrupted(runId: string): void {
    this.pending = { runId, on: this.host.current };
  }

  private async check(): Promise<void> {
    const pending = this.pending;
    const current = this.host.current;
    if (!pending || !current || current === pending.on) {
      return; // no host, or still the one that is shutting down
    }
    const entry = this.runs.get(pending.runId);
    const decision = resumeDecision(entry, this.actions.setting());
    if (decision === 'wait') {
      return;
    }
    this.pending = undefined;
    if (
      decision === 'leave' ||
      (decision === 'ask' && !(await this.actions.ask(pending.runId, entry!.info.iteration)))
    ) {
      return;
    }
    try {
      await this.actions.resume(pending.runId);
    } catch (error) {
      this.actions.failed(pending.runId, error);
    }
  }
}
