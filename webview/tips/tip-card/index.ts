export { TipCard, type TipCardEvents } from './tip-card';
