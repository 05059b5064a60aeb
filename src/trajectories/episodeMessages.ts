import { notificationType, requestType } from '../common/messageEndpoint';
import type { Episode } from '../rpc/protocol';

// Messages between the read-only episode view and the extension, declared once.

export interface EpisodeViewState {
  readonly runId: string;
  readonly episode: Episode;
  /** Scroll to this step (a step selected in the tree). */
  readonly focusStep?: number;
  /** Its iteration is still training: shown as it ended (no novelty rewards, no tip yet). */
  readonly provisional?: boolean;
}

export const EpisodeNotifications = {
  /** Shows another episode (or the same one, scrolled to a step). */
  show: notificationType<EpisodeViewState>('episode/show'),
} as const;

export const EpisodeRequests = {
  /** Shows a tip in the Memory Tips view. */
  revealTip: requestType<{ readonly tipId: string }, void>('episode/revealTip'),
} as const;
