import * as vscode from 'vscode';
import { Disposable } from '../common/lifecycle';
import type { HostApi } from '../host/hostApi';
import { Notifications, Requests } from '../rpc/methods';
import type { RerunResult, UpdateFinishedEvent, UpdateRerunParams } from '../rpc/protocol';
import type { RunsModel } from '../runs/runsModel';

/**
 * Runs one rerun or dry run on the host and shows its progress in a cancellable notification
 * (update/progress), resolving with its result on update/finished. Cancel sends update.cancel:
 * the host stops between iterations and the branch stays resumable ("Rerun" on it continues).
 */
export class RerunJobs extends Disposable {
  private readonly waiting = new Map<string, (event: UpdateFinishedEvent) => void>();
  private readonly early = new Map<string, UpdateFinishedEvent>();
  private readonly progress = new Map<string, (message: string) => void>();
  private readonly requests = new Map<string, UpdateRerunParams>();

  constructor(
    private readonly host: HostApi,
    private readonly runs: RunsModel,
  ) {
    super();
    this._register(
      host.on(Notifications.updateProgress, ({ jobId, progress }) => {
        this.progress.get(jobId)?.(
          `iteration ${progress.iteration}: ${progress.phase}${progress.total > 1 ? ` ${progress.done}/${progress.total}` : ''}`,
        );
      }),
    );
    this._register(
      host.on(Notifications.updateFinished, (event) => {
        const resolve = this.waiting.get(event.jobId);
        if (resolve) {
          resolve(event);
        } else {
          this.early.set(event.jobId, event);
        }
      }),
    );
  }

  /** A rerun or dry run this window has running, if any (the host runs one at a time). */
  get running(): UpdateRerunParams | undefined {
    return this.requests.values().next().value;
  }

  /** The result, or undefined when cancelled; throws a failure's sentence. */
  async run(request: UpdateRerunParams): Promise<RerunResult | undefined> {
    const job = await this.host.request(Requests.updateRerun, request);
    this.requests.set(job.jobId, request);
    if (job.branchId) {
      void this.runs.reload();
    }
    const title = request.dryRun ? `EMPO²: dry run of ${job.runId}` : `EMPO²: rerun on branch ${job.branchId}`;
    const event = await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title, cancellable: true },
      (report, token) =>
        new Promise<UpdateFinishedEvent>((resolve) => {
          this.progress.set(job.jobId, (message) => report.report({ message }));
          token.onCancellationRequested(() => void this.host.request(Requests.updateCancel, { jobId: job.jobId }));
          const early = this.early.get(job.jobId);
          if (early) {
            resolve(early);
          } else {
            this.waiting.set(job.jobId, resolve);
          }
        }),
    );
    this.waiting.delete(job.jobId);
    this.early.delete(job.jobId);
    this.progress.delete(job.jobId);
    this.requests.delete(job.jobId);
    if (job.branchId) {
      void this.runs.reload();
    }
    if (event.status === 'failed') {
      throw new Error(event.error ?? 'the rerun failed');
    }
    if (event.status === 'stopped') {
      void vscode.window.showInformationMessage(
        request.dryRun
          ? 'EMPO²: the dry run was cancelled.'
          : `EMPO²: the rerun was cancelled; branch ${job.branchId} is kept and "Rerun Off-Policy Update…" on it continues.`,
      );
      return undefined;
    }
    return event.result;
  }
}
