export { MetricsChart } from './metrics-chart';
