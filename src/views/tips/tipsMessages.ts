import type { HostState } from '../../host/hostState';
import { notificationType, requestType } from '../../webviews/messageEndpoint';

// Everything the Memory Tips webview and the extension say to each other, declared once and
// imported by both sides. Tip data (memory.*) joins when the protocol client exists.

/** Embedded in the page's HTML; what the panel shows on first paint. */
export interface TipsInitialState {
  readonly hostState: HostState;
}

/** Commands the panel's buttons may run; anything else is refused. */
export const TIPS_PANEL_COMMANDS = ['empo2.startHost', 'empo2.openRunFolder', 'empo2.addTip'] as const;
export type TipsPanelCommand = (typeof TIPS_PANEL_COMMANDS)[number];

export const TipsRequests = {
  runCommand: requestType<{ readonly command: TipsPanelCommand }, void>('tips/runCommand'),
} as const;

export const TipsNotifications = {
  hostStateChanged: notificationType<{ readonly state: HostState }>('tips/hostStateChanged'),
} as const;
