import { notificationType, requestType } from '../common/messageEndpoint';
import type { HealthKind } from '../host/connectionHealth';
import type { HostState } from '../host/hostState';
import type { MemoryChange, Tip, TipVersion } from '../rpc/protocol';
import type { TipDeletion, TipEdit, TipRef } from './tipRules';
import type { EditOutcome } from './tipsModel';

// Everything the Memory Tips webview and the extension say to each other, declared once and
// imported by both sides.

/** A save may wait this long for the link to come back before the panel gives up on it. */
export const SAVE_TIMEOUT_MS = 10 * 60_000;

export interface TipsSnapshot {
  readonly runId: string | undefined;
  readonly tips: readonly Tip[];
  /** Variations a new tip can go to (those with tips, and the run's configured tasks). */
  readonly variations: readonly string[];
  /** Why the tips could not be loaded, if they could not. */
  readonly error?: string;
}

/** Embedded in the page's HTML; what the panel shows on first paint. */
export interface TipsInitialState extends TipsSnapshot {
  readonly hostState: HostState;
  readonly connection: ConnectionView;
}

/** The link as the panel shows it: greyed content and a few words while it is down. */
export interface ConnectionView {
  readonly kind: HealthKind;
  /** "reconnecting… (12 s, next try in 1 s)"; absent while connected. */
  readonly detail?: string;
}

/** Commands the panel's buttons may run; anything else is refused. */
export const TIPS_PANEL_COMMANDS = ['empo2.startHost', 'empo2.openRunFolder', 'empo2.newRun'] as const;
export type TipsPanelCommand = (typeof TIPS_PANEL_COMMANDS)[number];

export const TipsRequests = {
  runCommand: requestType<{ readonly command: TipsPanelCommand }, void>('tips/runCommand'),
  /**
   * memory.update with the version the person read, and an edit id the panel chose for this
   * save (kept with the draft), so a save sent again after a dropped link or a reloaded view
   * is applied once.
   */
  save: requestType<TipEdit, EditOutcome>('tips/save'),
  add: requestType<{ readonly variationKey: string; readonly text: string; readonly editId: string }, Tip>('tips/add'),
  /** Asks the person to confirm (a modal dialog), then memory.delete; undefined when declined. */
  delete: requestType<TipDeletion, EditOutcome | undefined>('tips/delete'),
  history: requestType<TipRef, readonly TipVersion[]>('tips/history'),
  /** Opens the episode that wrote a tip. */
  openEpisode: requestType<{ readonly runId: string; readonly episodeId: string }, void>('tips/openEpisode'),
} as const;

export const TipsNotifications = {
  hostStateChanged: notificationType<{ readonly state: HostState }>('tips/hostStateChanged'),
  connectionChanged: notificationType<ConnectionView>('tips/connectionChanged'),
  /** The whole list (another run, a reconnect). */
  reset: notificationType<TipsSnapshot>('tips/reset'),
  /** Tips written, edited or deleted (by the policy or a person), as the host reported them. */
  changed: notificationType<{
    readonly runId: string;
    readonly changes: readonly MemoryChange[];
    readonly variations: readonly string[];
  }>('tips/changed'),
  /** Scroll to a tip and highlight it (a link in the episode view). */
  reveal: notificationType<TipRef>('tips/reveal'),
} as const;
