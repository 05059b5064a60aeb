export { EpisodeView, type RevealTipEvent } from './episode-view';
