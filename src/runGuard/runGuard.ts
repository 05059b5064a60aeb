import * as vscode from 'vscode';
import { Disposable } from '../common/lifecycle';
import type { BeforeHostStop } from '../host/hostCommands';
import type { HostManager } from '../host/hostManager';
import { describeError } from '../rpc/errors';
import { resumeRun } from '../runs/runCommands';
import { pauseAndWait } from '../runs/liveRunWait';
import type { RunsModel } from '../runs/runsModel';
import { ResumeAfterRestart } from './resumeAfterRestart';
import { NOW, PAUSE_FIRST, RESUME, stopQuestion, type ResumeSetting } from './runGuardText';

// Stop Host, Restart Host and Connect to Remote Host while a run trains here: ask first (pause
// after this iteration, or now, or cancel), and when a restarted host is back, resume the run it interrupted or offer to (the
// empo2.resumeAfterRestart setting decides). A host shutdown never loses a run: the host ends
// it `interrupted` and it resumes from its last checkpoint; this only saves the person from
// being surprised by it. resumeAfterRestart.ts decides when: on the new host, once it lists the run.

export class RunGuard extends Disposable {
  /** Offers or resumes the run a Stop/Restart Host of ours interrupted, when a host is back. */
  private readonly resumer: ResumeAfterRestart;

  constructor(
    private readonly host: HostManager,
    private readonly runs: RunsModel,
  ) {
    super();
    this.resumer = this._register(
      new ResumeAfterRestart(host, runs, {
        setting: () => vscode.workspace.getConfiguration('empo2').get<ResumeSetting>('resumeAfterRestart', 'resume'),
        ask: async (runId, iteration) =>
          (await vscode.window.showInformationMessage(
            `EMPO²: ${runId} was interrupted when the host stopped, after iteration ${iteration}. Resume training it?`,
            RESUME,
          )) === RESUME,
        resume: (runId) => resumeRun(host, runs, runId),
        failed: (runId, error) =>
          void vscode.window.showErrorMessage(`EMPO²: cannot resume ${runId}: ${describeError(error)}`),
      }),
    );
  }

  readonly beforeStop: BeforeHostStop = async (action) => {
    const live = this.runs.live;
    const question = live ? stopQuestion(action, live) : undefined;
    if (!live || !question) {
      return { now: false };
    }
    // Resumed by itself only on a host that comes back here: a remote host runs other folders.
    const interrupted = (): void => {
      if (action !== 'connect') {
        this.resumer.interrupted(live.info.runId);
      }
    };
    if (question.alreadyPaused) {
      interrupted(); // paused at a boundary: it stops at once, nothing lost
      return { now: false };
    }
    const choice = await vscode.window.showWarningMessage(
      question.message,
      { modal: true, detail: question.detail },
      PAUSE_FIRST,
      NOW,
    );
    if (choice === NOW) {
      interrupted();
      return { now: true };
    }
    if (choice !== PAUSE_FIRST) {
      return undefined;
    }
    const paused = await pauseAndWait(this.host, this.runs, live.info.runId);
    if (!paused) {
      return undefined;
    }
    interrupted();
    return { now: false };
  };
}
