// The one name of each quantity a person reads in several places (tree, status bar, episode
// view, charts), with its scale, so the same number never goes by two names.

/**
 * An episode's final score on the environments' scale: Episode.return in the protocol,
 * `rollout/return` (its mean) in metrics.jsonl. The RL return the update uses is this score
 * times algo.reward_scale; it is never shown under this name.
 */
export const SCORE = 'score';

/**
 * The score's range, the host's SCORE_MIN, SCORE_MAX (host/empo2/envs/base.py; a unit test
 * holds the two equal): a finished task scores 100, a failed one −100 in ScienceWorld (the
 * built-in worlds and TextWorld stay within 0..100). Every label that states the scale says it
 * from these.
 */
export const SCORE_MIN = -100;
export const SCORE_MAX = 100;

/** A number as a label writes it: a true minus sign, so "−100" never reads as a dash. */
function signed(value: number): string {
  return value < 0 ? `−${-value}` : String(value);
}

/** The scale beside a score: "−100 to 100" (words, not "−100–100", whose dashes run together). */
export const SCORE_SCALE = `${signed(SCORE_MIN)} to ${signed(SCORE_MAX)}`;

/**
 * `value.toFixed(digits)`, except that what rounds to zero reads "0" ("0.00"), never "-0"
 * ("-0.00"): a tiny negative reward or advantage is no sign a person can act on.
 */
export function fixed(value: number, digits: number): string {
  const text = value.toFixed(digits);
  return /^-0(\.0*)?$/.test(text) ? text.slice(1) : text;
}

/** A score as every view writes it: 25.0, 3.50, 100. */
export function formatReturn(value: number | undefined): string {
  if (value === undefined || !Number.isFinite(value)) {
    return '–';
  }
  return fixed(value, Math.abs(value) >= 100 ? 0 : Math.abs(value) >= 10 ? 1 : 2);
}

/** A share of something (success, clipped tokens): the 0..1 keys of metric-keys.json. */
export const SHARE_SCALE = 'share, 0–1';
