import { TipsNotifications, TipsRequests, type TipsInitialState } from '../../src/tips/tipsMessages';
import { connectToExtension, readInitialState, viewState } from '../common/bridge';
import './tips-panel';
import { NO_FILTER, type TipsFilter } from './tipsView';

// Entry of the Memory Tips webview: first paint from the embedded state, then live updates from
// the extension; the panel's events become requests, and their outcomes go back to the panel.

interface SavedState {
  readonly filter?: TipsFilter;
}

const initialState = readInitialState<TipsInitialState>();
const panel = document.createElement('empo2-tips-panel');
panel.hostState = initialState.hostState;
panel.runId = initialState.runId;
panel.tips = initialState.tips;
panel.variations = initialState.variations;
panel.error = initialState.error;
panel.filter = viewState.get<SavedState>()?.filter ?? NO_FILTER;
document.body.append(panel);

const extension = connectToExtension();
const report = (error: unknown) => (error instanceof Error ? error.message.replace(/^webview request '[^']+' failed: /, '') : String(error));

extension.onNotification(TipsNotifications.hostStateChanged, ({ state }) => {
  panel.hostState = state;
});
extension.onNotification(TipsNotifications.reset, (snapshot) => {
  panel.runId = snapshot.runId;
  panel.tips = snapshot.tips;
  panel.variations = snapshot.variations;
  panel.error = snapshot.error;
});
extension.onNotification(TipsNotifications.changed, ({ runId, changes, variations }) => {
  panel.applyChanges(runId, changes);
  panel.variations = variations;
});
extension.onNotification(TipsNotifications.reveal, ({ tipId }) => void panel.reveal(tipId));

panel.addEventListener('empo2-run-command', (event) => {
  extension.sendRequest(TipsRequests.runCommand, { command: event.detail.command }).catch((error: unknown) => console.error('EMPO² tips panel:', error));
});
panel.addEventListener('empo2-filter-change', (event) => viewState.set<SavedState>({ filter: event.detail }));
panel.addEventListener('empo2-tip-save', async (event) => {
  const { tipId } = event.detail;
  panel.setEditState(tipId, { busy: true });
  try {
    const outcome = await extension.sendRequest(TipsRequests.save, event.detail);
    if (outcome.kind === 'saved') {
      panel.editSaved(tipId);
      if (panel.hasHistory(tipId)) {
        panel.setHistory(tipId, await extension.sendRequest(TipsRequests.history, { tipId }));
      }
    } else {
      panel.setEditState(tipId, { conflict: { current: outcome.current, attempted: outcome.attempted } });
    }
  } catch (error) {
    panel.setEditState(tipId, { error: report(error) });
  }
});
panel.addEventListener('empo2-tip-discard-conflict', (event) => panel.setEditState(event.detail.tipId, undefined));
panel.addEventListener('empo2-tip-delete', async (event) => {
  const { tipId } = event.detail;
  try {
    const outcome = await extension.sendRequest(TipsRequests.delete, event.detail);
    if (outcome?.kind === 'conflict') {
      panel.setEditState(tipId, { error: `Tip ${tipId} changed meanwhile (now v${outcome.current.version}); read it again before deleting.` });
    }
  } catch (error) {
    panel.setEditState(tipId, { error: report(error) });
  }
});
panel.addEventListener('empo2-tip-history', async (event) => {
  const { tipId } = event.detail;
  if (panel.hasHistory(tipId)) {
    panel.setHistory(tipId, undefined);
    return;
  }
  try {
    panel.setHistory(tipId, await extension.sendRequest(TipsRequests.history, { tipId }));
  } catch (error) {
    panel.setEditState(tipId, { error: report(error) });
  }
});
panel.addEventListener('empo2-tip-add', async (event) => {
  panel.setAddState({ busy: true });
  try {
    const tip = await extension.sendRequest(TipsRequests.add, event.detail);
    panel.setAddState({ done: true });
    void panel.reveal(tip.id);
  } catch (error) {
    panel.setAddState({ error: report(error) });
  }
});
panel.addEventListener('empo2-open-episode', (event) => {
  extension.sendRequest(TipsRequests.openEpisode, event.detail).catch((error: unknown) => console.error('EMPO² tips panel:', error));
});
extension.signalReady();
