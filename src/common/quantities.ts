// The one name of each quantity a person reads in several places (tree, status bar, episode
// view, charts), with its scale, so the same number never goes by two names.

/**
 * An episode's final score, the environment's 0–100 scale (−100 a failed task): Episode.return
 * in the protocol, `rollout/return` (its mean) in metrics.jsonl. The RL return the update uses
 * is this score times algo.reward_scale; it is never shown under this name.
 */
export const SCORE = 'score';
export const SCORE_SCALE = '0–100';

/** A score as every view writes it: 25.0, 3.50, 100. */
export function formatReturn(value: number | undefined): string {
  if (value === undefined || !Number.isFinite(value)) {
    return '–';
  }
  const rounded = Math.abs(value) >= 100 ? value.toFixed(0) : Math.abs(value) >= 10 ? value.toFixed(1) : value.toFixed(2);
  return rounded === '-0.00' ? '0.00' : rounded;
}

/** A share of something (success, clipped tokens): the 0..1 keys of metric-keys.json. */
export const SHARE_SCALE = 'share, 0–1';
