export { MetricsPanel } from './metrics-panel';
