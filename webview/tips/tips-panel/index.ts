export { TipsPanel, type RunCommandEvent } from './tips-panel';
