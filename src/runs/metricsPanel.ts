import * as vscode from 'vscode';
import type { IDisposable } from '../common/lifecycle';
import type { MessageEndpoint } from '../common/messageEndpoint';
import { SingleWebviewPanel } from '../common/webviewPanel';
import { healthBadge } from '../host/connectionHealth';
import type { HostApi } from '../host/hostApi';
import { Notifications, Requests } from '../rpc/methods';
import { appendRecords, emptyColumns, parseMetricsJsonl, type MetricsColumns } from './metricsCharts';
import { MetricsNotifications, MetricsRequests, type MetricsSource } from './metricsMessages';
import { isActive, type RunsModel } from './runsModel';

/**
 * The live metrics panel (a webview panel in the editor area). It shows the current run: its
 * history from run.metrics, then each new iteration from run/metrics notifications. Without a
 * host it reads a finished run's metrics.jsonl from disk. The webview is kept alive while hidden,
 * so a 100,000-point history is not shipped again.
 */
export class MetricsPanel extends SingleWebviewPanel {
  static readonly viewType = 'empo2.metrics';
  private source: MetricsSource | undefined;
  private columns: MetricsColumns = emptyColumns();

  constructor(
    extensionUri: vscode.Uri,
    private readonly host: HostApi,
    private readonly runs: RunsModel,
  ) {
    super(extensionUri, { viewType: MetricsPanel.viewType, entry: 'metrics' });
    this._register(
      host.on(Notifications.runMetrics, ({ runId, records }) => {
        if (this.endpoint && this.source?.runId === runId && this.source.origin === 'host') {
          const columns = appendRecords(emptyColumns(Object.keys(this.columns.series)), records);
          appendRecords(this.columns, records);
          this.endpoint.sendNotification(MetricsNotifications.append, { runId, columns });
        }
      }),
    );
    this._register(
      runs.onDidChangeRun((entry) => {
        const live = isActive(entry.info);
        const state = entry.info.state;
        if (this.endpoint && this.source?.runId === entry.info.runId && (this.source.live !== live || this.source.state !== state)) {
          this.source = { ...this.source, live, state };
          this.endpoint.sendNotification(MetricsNotifications.live, { runId: entry.info.runId, live, state });
        }
      }),
    );
    this._register(
      runs.onDidChangeCurrent((entry) => {
        if (this.isOpen && entry && this.host.current && entry.info.runId !== this.source?.runId) {
          void this.showRun(entry.info.runId);
        }
      }),
    );
    this._register(host.onDidConnect(() => this.source?.origin === 'host' && void this.showRun(this.source.runId)));
    this._register(host.health.onDidChange(() => this.endpoint?.sendNotification(MetricsNotifications.connection, { connection: this.connectionBadge() })));
  }

  /** Why a host run's numbers are not live: the link is down, or the host was stopped. */
  private connectionBadge(): string | undefined {
    const kind = this.host.health.health.kind;
    return kind === 'none' ? 'host stopped' : healthBadge(kind);
  }

  /** What the panel shows (tests read it). */
  get shown(): { source: MetricsSource | undefined; points: number } | undefined {
    return this.isOpen ? { source: this.source, points: this.columns.iterations.length } : undefined;
  }

  /** Shows a run's metrics from the host. */
  async showRun(runId: string): Promise<void> {
    const { records } = await this.host.request(Requests.runMetrics, { runId }, { timeoutMs: 120_000 });
    const entry = this.runs.get(runId);
    const source: MetricsSource = { runId, live: entry ? isActive(entry.info) : false, origin: 'host', ...(entry ? { state: entry.info.state } : {}) };
    this.setData(source, appendRecords(emptyColumns(), records));
  }

  /** Shows a run folder's metrics.jsonl read from disk: a finished run, no host needed. */
  async showFolder(folder: vscode.Uri): Promise<void> {
    const bytes = await vscode.workspace.fs.readFile(vscode.Uri.joinPath(folder, 'metrics.jsonl'));
    const records = parseMetricsJsonl(new TextDecoder().decode(bytes));
    const runId = folder.path.split('/').filter(Boolean).pop() ?? 'run';
    this.setData({ runId, live: false, origin: 'folder' }, appendRecords(emptyColumns(), records));
  }

  private setData(source: MetricsSource, columns: MetricsColumns): void {
    this.source = source;
    this.columns = columns;
    // A new page asks for its data itself (metrics/reload) once it has loaded.
    if (!this.openPanel(`Metrics: ${source.runId}`, { source, connection: this.connectionBadge() })) {
      this.endpoint?.sendNotification(MetricsNotifications.reset, { source, columns });
    }
  }

  protected wire(endpoint: MessageEndpoint): IDisposable[] {
    return [
      endpoint.onRequest(MetricsRequests.reload, () => {
        endpoint.sendNotification(MetricsNotifications.reset, { source: this.source, columns: this.columns });
        endpoint.sendNotification(MetricsNotifications.connection, { connection: this.connectionBadge() });
      }),
    ];
  }

  protected override closed(): void {
    this.source = undefined;
    this.columns = emptyColumns();
  }
}
