import * as vscode from 'vscode';
import { renderWebviewHtml, webviewOptions } from '../common/html';
import { Disposable, disposeAll, type IDisposable } from '../common/lifecycle';
import { MessageEndpoint } from '../common/messageEndpoint';
import { webviewPort } from '../common/webviewPort';
import type { HostApi } from '../host/hostApi';
import { Notifications, Requests } from '../rpc/methods';
import { appendRecords, emptyColumns, parseMetricsJsonl, type MetricsColumns } from './metricsCharts';
import { MetricsNotifications, MetricsRequests, type MetricsSource } from './metricsMessages';
import { isActive, type RunsModel } from './runsModel';

/**
 * The live metrics panel (a webview panel in the editor area). It shows the current run: its
 * history from run.metrics, then each new iteration from run/metrics notifications. Without a
 * host it reads a finished run's metrics.jsonl from disk. The webview is kept alive while hidden
 * (retainContextWhenHidden), so zoom and scroll survive switching tabs and a 100,000-point
 * history is not shipped again.
 */
export class MetricsPanel extends Disposable {
  static readonly viewType = 'empo2.metrics';
  private panel: vscode.WebviewPanel | undefined;
  private endpoint: MessageEndpoint | undefined;
  private panelDisposables: IDisposable[] = [];
  private source: MetricsSource | undefined;
  private columns: MetricsColumns = emptyColumns();

  constructor(
    private readonly extensionUri: vscode.Uri,
    private readonly host: HostApi,
    private readonly runs: RunsModel,
  ) {
    super();
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
        if (this.panel && entry && this.host.current && entry.info.runId !== this.source?.runId) {
          void this.showRun(entry.info.runId);
        }
      }),
    );
    this._register(host.onDidConnect(() => this.source?.origin === 'host' && void this.showRun(this.source.runId)));
  }

  /** What the panel shows (tests read it). */
  get shown(): { source: MetricsSource | undefined; points: number } | undefined {
    return this.panel ? { source: this.source, points: this.columns.iterations.length } : undefined;
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
    const existed = this.panel !== undefined;
    this.open();
    this.panel!.title = `Metrics: ${source.runId}`;
    if (existed) {
      // A new webview asks for its data itself (metrics/reload) once it has loaded.
      this.endpoint!.sendNotification(MetricsNotifications.reset, { source, columns });
    }
  }

  private open(): void {
    if (this.panel) {
      this.panel.reveal(undefined, true);
      return;
    }
    const panel = vscode.window.createWebviewPanel(
      MetricsPanel.viewType,
      'EMPO² Metrics',
      { viewColumn: vscode.ViewColumn.Active, preserveFocus: true },
      { ...webviewOptions(this.extensionUri), retainContextWhenHidden: true },
    );
    panel.iconPath = vscode.Uri.joinPath(this.extensionUri, 'media', 'empo2.png');
    const endpoint = new MessageEndpoint(webviewPort(panel.webview), { awaitPeerReady: true });
    this.panel = panel;
    this.endpoint = endpoint;
    this.panelDisposables.push(
      endpoint,
      endpoint.onRequest(MetricsRequests.reload, () => {
        endpoint.sendNotification(MetricsNotifications.reset, { source: this.source, columns: this.columns });
      }),
      panel.onDidDispose(() => {
        disposeAll(this.panelDisposables);
        this.panel = undefined;
        this.endpoint = undefined;
        this.source = undefined;
        this.columns = emptyColumns();
      }),
    );
    panel.webview.html = renderWebviewHtml(panel.webview, this.extensionUri, {
      entry: 'metrics',
      title: 'EMPO² Metrics',
      initialState: { source: this.source },
    });
  }

  override dispose(): void {
    this.panel?.dispose();
    disposeAll(this.panelDisposables);
    super.dispose();
  }
}
