import { notificationType } from '../common/messageEndpoint';
import type { ComparisonView } from './comparison';

// Messages between the comparison panel and the extension, declared once. The view to draw is
// embedded in the HTML (first paint never waits); `show` replaces it in an open panel.

export interface CompareInitialState {
  readonly view: ComparisonView | undefined;
}

export const CompareNotifications = {
  show: notificationType<{ readonly view: ComparisonView }>('compare/show'),
} as const;
