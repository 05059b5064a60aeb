import { SAVE_TIMEOUT_MS, TipsNotifications, TipsRequests, type TipsInitialState } from '../../src/tips/tipsMessages';
import type { AddDraft, Drafts } from './drafts';
import { connectToExtension, readInitialState, viewState } from '../common/bridge';
import './tips-panel';
import { NO_FILTER, type TipsFilter } from './tipsView';

// Entry of the Memory Tips webview: first paint from the embedded state, then live updates from
// the extension; the panel's events become requests, and their outcomes go back to the panel.

interface SavedState {
  readonly filter?: TipsFilter;
  /** Open editors' texts: they survive a dropped link, a reconnect and a reloaded view. */
  readonly drafts?: Drafts;
  readonly addDraft?: AddDraft;
}

const initialState = readInitialState<TipsInitialState>();
const panel = document.createElement('empo2-tips-panel');
panel.hostState = initialState.hostState;
panel.runId = initialState.runId;
panel.tips = initialState.tips;
panel.variations = initialState.variations;
panel.error = initialState.error;
panel.connection = initialState.connection;
const saved = viewState.get<SavedState>() ?? {};
panel.filter = saved.filter ?? NO_FILTER;
panel.drafts = saved.drafts ?? {};
panel.addDraft = saved.addDraft;
panel.restoreAdding();
document.body.append(panel);
const keep = (change: Partial<SavedState>) =>
  viewState.set<SavedState>({ ...(viewState.get<SavedState>() ?? {}), ...change });

const extension = connectToExtension();
const report = (error: unknown) => (error instanceof Error ? error.message : String(error));

extension.onNotification(TipsNotifications.hostStateChanged, ({ state }) => {
  panel.hostState = state;
});
extension.onNotification(TipsNotifications.connectionChanged, (connection) => {
  panel.connection = connection;
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
  extension
    .sendRequest(TipsRequests.runCommand, { command: event.detail.command })
    .catch((error: unknown) => console.error('EMPO² tips panel:', error));
});
panel.addEventListener('empo2-filter-change', (event) => keep({ filter: event.detail }));
panel.addEventListener('empo2-drafts-change', (event) =>
  keep({ drafts: event.detail.drafts, addDraft: event.detail.addDraft }),
);
panel.addEventListener('empo2-tip-save', async (event) => {
  const { tipId } = event.detail;
  panel.setEditState(tipId, { busy: true });
  try {
    // A save may wait for a dropped link to come back (the extension sends it again then).
    const outcome = await extension.sendRequest(TipsRequests.save, event.detail, { timeoutMs: SAVE_TIMEOUT_MS });
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
      panel.setEditState(tipId, {
        error: `Tip ${tipId} changed meanwhile (now v${outcome.current.version}); read it again before deleting.`,
      });
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
    const tip = await extension.sendRequest(TipsRequests.add, event.detail, { timeoutMs: SAVE_TIMEOUT_MS });
    panel.setAddState({ done: true });
    void panel.reveal(tip.id);
  } catch (error) {
    panel.setAddState({ error: report(error) });
  }
});
panel.addEventListener('empo2-open-episode', (event) => {
  extension
    .sendRequest(TipsRequests.openEpisode, event.detail)
    .catch((error: unknown) => console.error('EMPO² tips panel:', error));
});
extension.signalReady();
