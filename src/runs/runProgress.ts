import * as vscode from 'vscode';
import { Disposable } from '../common/lifecycle';
import type { RunEntry, RunsModel } from './runsModel';
import { isMoving, iterationText } from './runText';

/**
 * Progress for long work on a run: a notification while a run prepares (loading the policy,
 * which builds the built-in one on first use), then a status-bar progress for as long as it
 * trains, saying the iteration and phase (runText.ts, the status bar's words too). A paused run
 * has none: nothing moves, so nothing spins.
 */
export class RunProgressReporter extends Disposable {
  private readonly active = new Map<string, { update: (entry: RunEntry) => void; done: () => void }>();
  private readonly lastState = new Map<string, string>();

  constructor(runs: RunsModel) {
    super();
    this._register(runs.onDidChangeRun((entry) => this.changed(entry)));
    this._register(runs.onDidChangeRuns(() => runs.list().forEach((entry) => this.changed(entry))));
  }

  private changed(entry: RunEntry): void {
    const id = entry.info.runId;
    this.lastState.set(id, entry.info.state);
    const tracked = this.active.get(id);
    if (!isMoving(entry)) { // paused, interrupted, ended: no spinner
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
      void vscode.window.withProgress(
        { location: vscode.ProgressLocation.Notification, title: `EMPO²: preparing run ${id}` },
        (progress) => {
          progress.report({ message: 'loading the policy (the built-in policy is built on first use, about a minute on a CPU)' });
          return new Promise<void>((resolve) => {
            const poll = setInterval(() => {
              const state = this.lastState.get(id);
              if (state !== 'starting') {
                clearInterval(poll);
                resolve();
              }
            }, 250);
            void finished.then(() => {
              clearInterval(poll);
              resolve();
            });
          });
        },
      );
    }
    void vscode.window.withProgress({ location: vscode.ProgressLocation.Window, title: `EMPO² ${id}` }, (progress) => {
      update = (e) => progress.report({ message: iterationText(e) });
      update(entry);
      return finished;
    });
  }

  override dispose(): void {
    for (const tracked of this.active.values()) {
      tracked.done();
    }
    this.active.clear();
    super.dispose();
  }
}
