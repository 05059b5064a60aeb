import * as vscode from 'vscode';
import { Disposable } from '../common/lifecycle';
import type { BeforeHostStop } from '../host/hostCommands';
import type { HostManager } from '../host/hostManager';
import { describeError } from '../rpc/errors';
import { Requests } from '../rpc/methods';
import { resumeRun } from '../runs/runCommands';
import type { RunsModel } from '../runs/runsModel';
import { NOW, PAUSE_FIRST, RESUME, resumeDecision, stopQuestion, type ResumeSetting } from './runGuardText';

// Stop Host and Restart Host while a run trains: ask first (pause after this iteration, or now,
// or cancel), and when a restarted host is back, resume the run it interrupted or offer to (the
// empo2.resumeAfterRestart setting decides). A host shutdown never loses a run: the host ends
// it `interrupted` and it resumes from its last checkpoint; this only saves the person from
// being surprised by it.

export class RunGuard extends Disposable {
  /** The run a Stop/Restart Host of ours interrupted: offered or resumed when a host is back. */
  private interrupted: string | undefined;

  constructor(
    private readonly host: HostManager,
    private readonly runs: RunsModel,
  ) {
    super();
    this._register(runs.onDidChangeRuns(() => void this.afterReconnect()));
  }

  readonly beforeStop: BeforeHostStop = async (action) => {
    const live = this.runs.live;
    const question = live ? stopQuestion(action, live) : undefined;
    if (!live || !question) {
      return { now: false };
    }
    if (question.alreadyPaused) {
      this.interrupted = live.info.runId; // paused at a boundary: it stops at once, nothing lost
      return { now: false };
    }
    const choice = await vscode.window.showWarningMessage(question.message, { modal: true, detail: question.detail }, PAUSE_FIRST, NOW);
    if (choice === NOW) {
      this.interrupted = live.info.runId;
      return { now: true };
    }
    if (choice !== PAUSE_FIRST) {
      return undefined;
    }
    const paused = await this.pauseAndWait(live.info.runId);
    if (!paused) {
      return undefined;
    }
    this.interrupted = live.info.runId;
    return { now: false };
  };

  /** run.pause, then waits (cancellable) until the run is paused at its iteration boundary. */
  private async pauseAndWait(runId: string): Promise<boolean> {
    try {
      await this.host.request(Requests.runPause, { runId });
    } catch (error) {
      void vscode.window.showErrorMessage(`EMPO²: cannot pause ${runId}: ${describeError(error)}`);
      return false;
    }
    return vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: `EMPO²: waiting for ${runId} to finish its iteration`, cancellable: true },
      (_progress, token) =>
        new Promise<boolean>((resolve) => {
          const check = (): void => {
            const entry = this.runs.get(runId);
            if (!entry || !entry.info.live || entry.info.state === 'paused') {
              done(true);
            }
          };
          const subscription = this.runs.onDidChangeRun(check);
          const cancelled = token.onCancellationRequested(() => done(false));
          function done(value: boolean): void {
            subscription.dispose();
            cancelled.dispose();
            resolve(value);
          }
          check();
        }),
    );
  }

  private async afterReconnect(): Promise<void> {
    const runId = this.interrupted;
    if (!runId || !this.host.current) {
      return;
    }
    const entry = this.runs.get(runId);
    const setting = vscode.workspace.getConfiguration('empo2').get<ResumeSetting>('resumeAfterRestart', 'resume');
    const decision = resumeDecision(entry, setting);
    if (decision === 'wait') {
      return;
    }
    this.interrupted = undefined;
    if (decision === 'ask') {
      const ok = await vscode.window.showInformationMessage(`EMPO²: ${runId} was interrupted when the host stopped, after iteration ${entry!.info.iteration}. Resume training it?`, RESUME);
      if (ok !== RESUME) {
        return;
      }
    } else if (decision !== 'resume') {
      return;
    }
    try {
      await resumeRun(this.host, this.runs, runId);
    } catch (error) {
      void vscode.window.showErrorMessage(`EMPO²: cannot resume ${runId}: ${describeError(error)}`);
    }
  }
}
