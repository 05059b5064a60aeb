export { TipsPanel, type AddTipEvent, type FilterChangeEvent, type RunCommandEvent } from './tips-panel';
