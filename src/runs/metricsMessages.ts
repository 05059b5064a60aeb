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
  /** The run's folder, when known (it tells two runs of one id in two run roots apart). */
  readonly path?: string;
  /** A branch (a host run): its parent and the checkpoint it starts from; its line joins the parent's when both are shown. */
  readonly parent?: { readonly runId: string; readonly checkpoint: number };
}

/** What tells shown runs apart: a host run by its id, a folder read from disk by its path. */
export function sourceKey(source: MetricsSource): string {
  return source.origin === 'host' ? `host:${source.runId}` : `folder:${source.path ?? source.runId}`;
}

/** One run the panel shows: where its numbers come from, and the numbers. */
export interface ShownRun {
  readonly source: MetricsSource;
  readonly columns: MetricsColumns;
}

/** Embedded in the HTML: which runs; the numbers follow in a `reset` right after `ready`. */
export interface MetricsInitialState {
  /** One run, or several overlaid (Compare Runs' Metrics), in the order they were added. */
  readonly sources: readonly MetricsSource[];
  /** Why the numbers are not live although a run trains ("reconnecting…"); absent when live. */
  readonly connection?: string;
}

export const MetricsNotifications = {
  /** Everything for the shown runs (on open, on adding or removing runs, after a reconnect). */
  reset: notificationType<{ readonly runs: readonly ShownRun[] }>('metrics/reset'),
  /** New iterations of a shown host run, in columns. */
  append: notificationType<{ readonly runId: string; readonly columns: MetricsColumns }>('metrics/append'),
  /** A shown host run started or stopped training. */
  live: notificationType<{ readonly runId: string; readonly live: boolean; readonly state: string }>('metrics/live'),
  /** The link to the host dropped or came back: the badge says "reconnecting…", not "● live". */
  connection: notificationType<{ readonly connection: string | undefined }>('metrics/connection'),
} as const;

export const MetricsRequests = {
  /** The webview asks for everything again (it was reloaded). */
  reload: requestType<Record<string, never>, void>('metrics/reload'),
  /** "Add run…": the extension asks which runs (a quick pick) and overlays them; answered at once. */
  addRuns: requestType<Record<string, never>, void>('metrics/addRuns'),
  /** A run's "remove" button: the panel stops showing that run (sourceKey of its source). */
  removeRun: requestType<{ readonly key: string }, void>('metrics/removeRun'),
} as const;
