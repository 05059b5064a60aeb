import { MetricsNotifications, MetricsRequests, type MetricsInitialState } from '../../src/runs/metricsMessages';
import { connectToExtension, readInitialState } from '../common/bridge';
import './metrics-panel';

// Entry of the metrics panel. The embedded state names the runs; their numbers (up to hundreds
// of thousands of points per series) come in one `reset` message right after `ready`, not in
// the HTML, and new iterations in `append` messages.

const initialState = readInitialState<MetricsInitialState>();
const panel = document.createElement('empo2-metrics-panel');
panel.sources = initialState.sources;
panel.connection = initialState.connection;
document.body.append(panel);

const extension = connectToExtension();
extension.onNotification(MetricsNotifications.reset, ({ runs }) => panel.reset(runs));
extension.onNotification(MetricsNotifications.append, ({ runId, columns }) => panel.appendColumns(columns, runId));
extension.onNotification(MetricsNotifications.live, ({ runId, live, state }) => panel.setLive(runId, live, state));
extension.onNotification(MetricsNotifications.connection, ({ connection }) => {
  panel.connection = connection;
});
const report = (error: unknown) => console.error('EMPO² metrics:', error);
panel.addEventListener('empo2-add-runs', () => void extension.sendRequest(MetricsRequests.addRuns, {}).catch(report));
panel.addEventListener(
  'empo2-remove-run',
  ({ detail }) => void extension.sendRequest(MetricsRequests.removeRun, detail).catch(report),
);
extension.signalReady();
void extension.sendRequest(MetricsRequests.reload, {}).catch(report);
