export { CompareView } from './compare-view';
