import { connectToExtension, readInitialState } from '../common/bridge';
import { TipsNotifications, TipsRequests, type TipsInitialState } from '../../src/views/tips/tipsMessages';
import './tips-panel';

// Entry of the Memory Tips webview: first paint from the embedded state, then live updates.

const initialState = readInitialState<TipsInitialState>();
const panel = document.createElement('empo2-tips-panel');
panel.hostState = initialState.hostState;
document.body.append(panel);

const extension = connectToExtension();
extension.onNotification(TipsNotifications.hostStateChanged, ({ state }) => {
  panel.hostState = state;
});
panel.addEventListener('empo2-run-command', (event) => {
  extension
    .sendRequest(TipsRequests.runCommand, { command: event.detail.command })
    .catch((error: unknown) => console.error('EMPO² tips panel:', error));
});
extension.signalReady();
