import { MetricsNotifications, MetricsRequests, type MetricsInitialState } from '../../src/runs/metricsMessages';
import { connectToExtension, readInitialState } from '../common/bridge';
import './metrics-panel';

// Entry of the metrics panel. The embedded state names the run; its numbers (up to hundreds of
// thousands of points per series) come in one `reset` message right after `ready`, not in the
// HTML, and new iterations in `append` messages.

const initialState = readInitialState<MetricsInitialState>();
const panel = document.createElement('empo2-metrics-panel');
panel.source = initialState.source;
panel.connection = initialState.connection;
document.body.append(panel);

const extension = connectToExtension();
extension.onNotification(MetricsNotifications.reset, ({ source, columns }) => panel.reset(source, columns));
extension.onNotification(MetricsNotifications.append, ({ runId, columns }) => {
  if (runId === panel.source?.runId) {
    panel.appendColumns(columns);
  }
});
extension.onNotification(MetricsNotifications.live, ({ runId, live, state }) => {
  if (panel.source && runId === panel.source.runId) {
    panel.source = { ...panel.source, live, state };
  }
});
extension.onNotification(MetricsNotifications.connection, ({ connection }) => {
  panel.connection = connection;
});
extension.signalReady();
void extension.sendRequest(MetricsRequests.reload, {}).catch((error: unknown) => console.error('EMPO² metrics:', error));
