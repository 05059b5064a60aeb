import { notificationType, requestType } from '../common/messageEndpoint';
import type { MetricsColumns } from './metricsCharts';

// Messages between the metrics panel and the extension, declared once.

export interface MetricsSource {
  readonly runId: string;
  /** Live: the host trains this run and new iterations will arrive. */
  readonly live: boolean;
  /** Where the numbers come from: the host, or metrics.jsonl read from disk. */
  readonly origin: 'host' | 'folder';
  /** The run's state (running, finished, …), when the host said. */
  readonly state?: string;
}

/** Embedded in the HTML: which run; the numbers follow in a `reset` right after `ready`. */
export interface MetricsInitialState {
  readonly source: MetricsSource | undefined;
  /** Why the numbers are not live although the run trains ("reconnecting…"); absent when live. */
  readonly connection?: string;
}

export const MetricsNotifications = {
  /** Everything for a run (on open, on switching runs, after a reconnect). */
  reset: notificationType<{ readonly source: MetricsSource | undefined; readonly columns: MetricsColumns }>('metrics/reset'),
  /** New iterations of the shown run, in columns. */
  append: notificationType<{ readonly runId: string; readonly columns: MetricsColumns }>('metrics/append'),
  /** The shown run started or stopped training. */
  live: notificationType<{ readonly runId: string; readonly live: boolean; readonly state: string }>('metrics/live'),
  /** The link to the host dropped or came back: the badge says "reconnecting…", not "● live". */
  connection: notificationType<{ readonly connection: string | undefined }>('metrics/connection'),
} as const;

export const MetricsRequests = {
  /** The webview asks for everything again (it was reloaded). */
  reload: requestType<Record<string, never>, void>('metrics/reload'),
} as const;
