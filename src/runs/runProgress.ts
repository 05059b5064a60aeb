import * as vscode from 'vscode';
import { Disposable } from '../common/lifecycle';
import type { RunEntry, RunsModel } from './runsModel';
import { preparingPercent, preparingText, RateEstimate } from './preparingText';
import { isMoving, iterationText } from './runText';

/**
 * Progress for long work on a run: a notification while a run prepares (loading the policy, or
 * building the built-in one when neither the package nor the cache has it), then a status-bar
 * progress for as long as it trains, saying the iteration and phase (runText.ts, the status
 * bar's words too). A paused run has none: nothing moves, so nothing spins.
 */
export class RunProgressReporter extends Disposable {
  private readonly active = new Map<string, { update: (entry: RunEntry) => void; done: () => void }>();
  private readonly preparing = new Map<string, (entry: RunEntry) => void>();

  /** `stop` is what the notification's Cancel does (Stop Run on that run). */
  constructor(
    runs: RunsModel,
    private readonly stop: (runId: string) => Thenable<unknown>,
  ) {
    super();
    this._register(runs.onDidChangeRun((entry) => this.changed(entry)));
    this._register(runs.onDidChangeRuns(() => runs.list().forEach((entry) => this.changed(entry))));
  }

  private changed(entry: RunEntry): void {
    const id = entry.info.runId;
    this.preparing.get(id)?.(entry);
    const tracked = this.active.get(id);
    if (!isMoving(entry)) {
      // paused, interrupted, ended: no spinner
      tracked?.done();
      this.active.delete(id);
      return;
    }
    if (tracked) {
      tracked.update(entry);
      return;
    }
    let update: (entry: RunEntry) => void = () => undefined;
    let done: () => void = () => undefined;
    const finished = new Promise<void>((resolve) => (done = resolve));
    this.active.set(id, { update: (e) => update(e), done: () => done() });
    if (entry.info.state === 'starting') {
      this.showPreparing(id, finished);
    }
    void vscode.window.withProgress({ location: vscode.ProgressLocation.Window, title: `EMPO² ${id}` }, (progress) => {
      update = (e) => progress.report({ message: iterationText(e) });
      update(entry);
      return finished;
    });
  }

  /**
   * The notification of a starting run: what the host prepares (loading the policy, or building
   * the built-in one with its step and an ETA), and a Cancel that stops the run (the host stops
   * a build with nothing written to the cache). It closes when the run leaves `starting`.
   */
  private showPreparing(id: string, finished: Promise<void>): void {
    void vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: `EMPO²: preparing run ${id}`, cancellable: true },
      (progress, cancel) => {
        const rate = new RateEstimate();
        let percent = 0;
        const show = (entry: RunEntry) => {
          const p = entry.progress?.phase === 'preparing' ? entry.progress : null;
          const now = preparingPercent(p);
          const left = p ? rate.secondsLeft(p.done, p.total, Date.now()) : undefined;
          progress.report({ message: preparingText(p, left), increment: now > percent ? now - percent : undefined });
          percent = Math.max(percent, now);
        };
        progress.report({ message: preparingText(null, undefined) });
        return new Promise<void>((resolve) => {
          const close = () => {
            this.preparing.delete(id);
            resolve();
          };
          this.preparing.set(id, (entry) => (entry.info.state === 'starting' ? show(entry) : close()));
          cancel.onCancellationRequested(() => {
            close();
            void this.stop(id);
          });
          void finished.then(close);
        });
      },
    );
  }

  override dispose(): void {
    for (const tracked of this.active.values()) {
      tracked.done();
    }
    this.active.clear();
    super.dispose();
  }
}
