import * as vscode from 'vscode';
import type { IDisposable } from '../common/lifecycle';
import type { MessageEndpoint } from '../common/messageEndpoint';
import { SingleWebviewPanel } from '../common/webviewPanel';
import { healthBadge } from '../host/connectionHealth';
import type { HostApi } from '../host/hostApi';
import { showFailure } from '../host/notices';
import { Notifications, Requests } from '../rpc/methods';
import type { RunInfo } from '../rpc/protocol';
import { appendRecords, emptyColumns, parseMetricsJsonl } from './metricsCharts';
import { MetricsNotifications, MetricsRequests, sourceKey, type MetricsSource, type ShownRun } from './metricsMessages';
import { pickRuns, type MetricsTarget } from './pickRuns';
import { isActive, trainedElsewhere, type RunsModel } from './runsModel';

/**
 * The live metrics panel (a webview panel in the editor area). It shows the current run, or
 * several runs overlaid (Compare Runs' Metrics, or "Add run…" in the panel): each run's history
 * from run.metrics, then each new iteration from run/metrics notifications. Without a host it
 * reads finished runs' metrics.jsonl from disk. The webview is kept alive while hidden, so a
 * 100,000-point history is not shipped again.
 */
export class MetricsPanel extends SingleWebviewPanel {
  static readonly viewType = 'empo2.metrics';
  /** The shown runs, in the order they were added; their columns grow as iterations arrive. */
  private shownRuns: ShownRun[] = [];

  constructor(
    extensionUri: vscode.Uri,
    private readonly host: HostApi,
    private readonly runs: RunsModel,
  ) {
    super(extensionUri, { viewType: MetricsPanel.viewType, entry: 'metrics' });
    this._register(
      host.on(Notifications.runMetrics, ({ runId, records }) => {
        const shown = this.hostRun(runId);
        if (this.endpoint && shown) {
          const columns = appendRecords(emptyColumns(Object.keys(shown.columns.series)), records);
          appendRecords(shown.columns, records);
          this.endpoint.sendNotification(MetricsNotifications.append, { runId, columns });
        }
      }),
    );
    this._register(
      runs.onDidChangeRun((entry) => {
        const live = isActive(entry.info);
        // A run the host was training when the host went away: its last heard state is not true.
        const state = this.stateText(entry.info);
        const shown = this.hostRun(entry.info.runId);
        if (this.endpoint && shown && (shown.source.live !== live || shown.source.state !== state)) {
          this.replace(shown, { ...shown, source: { ...shown.source, live, state } });
          this.endpoint.sendNotification(MetricsNotifications.live, { runId: entry.info.runId, live, state });
        }
      }),
    );
    this._register(
      runs.onDidChangeCurrent((entry) => {
        // One run shown follows the current run; a comparison stays as the person made it.
        const single = this.shownRuns.length === 1 ? this.shownRuns[0].source : undefined;
        if (this.isOpen && entry && this.host.current && single && entry.info.runId !== single.runId) {
          void this.showRun(entry.info.runId);
        }
      }),
    );
    this._register(
      host.onDidConnect(() => this.shownRuns.some((run) => run.source.origin === 'host') && void this.reloadHostRuns()),
    );
    this._register(
      host.health.onDidChange(() =>
        this.endpoint?.sendNotification(MetricsNotifications.connection, { connection: this.connectionBadge() }),
      ),
    );
  }

  /** Why a host run's numbers are not live: the link is down, or the host was stopped. */
  private connectionBadge(): string | undefined {
    const kind = this.host.health.health.kind;
    return kind === 'none' ? 'host stopped' : healthBadge(kind);
  }

  /** What the panel shows (tests read it): the first run, and every run overlaid. */
  get shown():
    | { source: MetricsSource | undefined; points: number; runs: { source: MetricsSource; points: number }[] }
    | undefined {
    if (!this.isOpen) {
      return undefined;
    }
    const runs = this.shownRuns.map(({ source, columns }) => ({ source, points: columns.iterations.length }));
    return { source: runs[0]?.source, points: runs[0]?.points ?? 0, runs };
  }

  /** Shows a run's metrics from the host (alone). */
  async showRun(runId: string): Promise<void> {
    this.setRuns([await this.loadHostRun(runId)]);
  }

  /** Shows a run folder's metrics.jsonl read from disk (alone): a finished run, no host needed. */
  async showFolder(folder: vscode.Uri): Promise<void> {
    this.setRuns([await this.loadFolder(folder)]);
  }

  /** Overlays several runs on one set of charts, in this order. */
  async compare(targets: readonly MetricsTarget[]): Promise<void> {
    this.setRuns(await Promise.all(targets.map((target) => this.load(target))));
  }

  /** Adds runs to the shown ones (a run already shown is not added twice). */
  async addRuns(targets: readonly MetricsTarget[]): Promise<void> {
    const added = await Promise.all(targets.map((target) => this.load(target)));
    const known = new Set(this.shownRuns.map((run) => sourceKey(run.source)));
    this.setRuns([...this.shownRuns, ...added.filter((run) => !known.has(sourceKey(run.source)))]);
  }

  private load(target: MetricsTarget): Promise<ShownRun> {
    return typeof target === 'string' ? this.loadHostRun(target) : this.loadFolder(target);
  }

  private async loadHostRun(runId: string): Promise<ShownRun> {
    const { records } = await this.host.request(Requests.runMetrics, { runId }, { timeoutMs: 120_000 });
    const entry = this.runs.get(runId);
    const source: MetricsSource = entry
      ? {
          runId,
          live: isActive(entry.info),
          origin: 'host',
          state: this.stateText(entry.info),
          path: entry.info.path,
          ...(entry.info.parent
            ? { parent: { runId: entry.info.parent.runId, checkpoint: entry.info.parent.checkpoint } }
            : {}),
        }
      : { runId, live: false, origin: 'host' };
    return { source, columns: appendRecords(emptyColumns(), records) };
  }

  /** The legend's state: a run its host trained when that host went away is not known to go
   *  on; one another process trains is followed by the host from its files. */
  private stateText(info: RunInfo): string {
    if (!trainedElsewhere(info)) {
      return info.state;
    }
    return this.host.current ? `${info.state} in another process` : 'host stopped';
  }

  private async loadFolder(folder: vscode.Uri): Promise<ShownRun> {
    const bytes = await vscode.workspace.fs.readFile(vscode.Uri.joinPath(folder, 'metrics.jsonl'));
    const records = parseMetricsJsonl(new TextDecoder().decode(bytes));
    const runId = folder.path.split('/').filter(Boolean).pop() ?? 'run';
    return {
      source: { runId, live: false, origin: 'folder', path: folder.fsPath },
      columns: appendRecords(emptyColumns(), records),
    };
  }

  /** After a reconnect: every host run's history again (iterations may have passed meanwhile). */
  private async reloadHostRuns(): Promise<void> {
    const runs = await Promise.all(
      this.shownRuns.map((run) =>
        run.source.origin === 'host' ? this.loadHostRun(run.source.runId).catch(() => run) : run,
      ),
    );
    this.setRuns(runs, false); // not the person's doing: the tab they read stays in front
  }

  private hostRun(runId: string): ShownRun | undefined {
    return this.shownRuns.find((run) => run.source.origin === 'host' && run.source.runId === runId);
  }

  private replace(old: ShownRun, next: ShownRun): void {
    this.shownRuns = this.shownRuns.map((run) => (run === old ? next : run));
  }

  private setRuns(runs: ShownRun[], reveal = true): void {
    this.shownRuns = runs;
    const sources = runs.map((run) => run.source);
    const title =
      runs.length === 1 ? `Metrics: ${sources[0].runId}` : runs.length ? `Metrics: ${runs.length} runs` : 'Metrics';
    // A new page asks for its data itself (metrics/reload) once it has loaded.
    if (!this.openPanel(title, { sources, connection: this.connectionBadge() }, true, reveal)) {
      this.endpoint?.sendNotification(MetricsNotifications.reset, { runs });
    }
  }

  /** "Add run…": asks which runs, then adds them; failures are said, never thrown at the page. */
  private async pickAndAdd(): Promise<void> {
    try {
      const exclude = this.shownRuns.filter((run) => run.source.origin === 'host').map((run) => run.source.runId);
      const targets = await pickRuns(this.host, this.runs, { title: 'EMPO²: Add Runs to the Metrics', exclude });
      if (targets) {
        await this.addRuns(targets);
      }
    } catch (error) {
      await showFailure('Adding runs to the metrics', error);
    }
  }

  protected wire(endpoint: MessageEndpoint): IDisposable[] {
    return [
      endpoint.onRequest(MetricsRequests.reload, () => {
        endpoint.sendNotification(MetricsNotifications.reset, { runs: this.shownRuns });
        endpoint.sendNotification(MetricsNotifications.connection, { connection: this.connectionBadge() });
      }),
      // Answered at once: the pick waits for the person, longer than a request may take.
      endpoint.onRequest(MetricsRequests.addRuns, () => void this.pickAndAdd()),
      endpoint.onRequest(MetricsRequests.removeRun, ({ key }) =>
        this.setRuns(
          this.shownRuns.filter((run) => sourceKey(run.source) !== key),
          false,
        ),
      ),
    ];
  }

  protected override closed(): void {
    this.shownRuns = [];
  }
}
