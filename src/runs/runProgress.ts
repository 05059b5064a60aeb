import * as vscode from 'vscode';
import { Disposable } from '../common/lifecycle';
import { isActive, type RunEntry, type RunsModel } from './runsModel';

/**
 * Progress for long work on a run: a notification while a run prepares (loading the policy,
 * which builds the built-in one on first use), then a status-bar progress for as long as it
 * trains, saying the iteration and phase.
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
    if (!isActive(entry.info)) {
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
      update = (e) => {
        const total = e.info.iterations ? `/${e.info.iterations}` : '';
        const p = e.progress;
        progress.report({
          message: p ? `iteration ${p.iteration}${total}: ${p.phase} ${p.done}/${p.total}` : `${e.info.state}, iteration ${e.info.iteration}${total}`,
        });
      };
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
