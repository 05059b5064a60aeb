import { EpisodeNotifications, EpisodeRequests, type EpisodeViewState } from '../../src/trajectories/episodeMessages';
import { connectToExtension, readInitialState } from '../common/bridge';
import './episode-view';

// Entry of the episode view: first paint from the embedded state; another episode replaces it.

const initialState = readInitialState<EpisodeViewState>();
const view = document.createElement('empo2-episode-view');
view.runId = initialState.runId;
view.episode = initialState.episode;
view.focusStep = initialState.focusStep;
view.provisional = initialState.provisional === true;
document.body.append(view);

const extension = connectToExtension();
extension.onNotification(EpisodeNotifications.show, (state) => {
  view.runId = state.runId;
  view.episode = state.episode;
  view.focusStep = state.focusStep;
  view.provisional = state.provisional === true;
});
view.addEventListener('empo2-reveal-tip', (event) => {
  extension
    .sendRequest(EpisodeRequests.revealTip, event.detail)
    .catch((error: unknown) => console.error('EMPO² episode view:', error));
});
extension.signalReady();
