import type { MemoryChange, MemoryFilter, Tip } from '../../src/rpc/protocol';
import { applyTipChanges, isPersonAuthor, POLICY_AUTHOR } from '../../src/tips/tipRules';
import { fixed, SCORE_MAX, SCORE_SCALE } from '../../src/common/quantities';

// What the Memory Tips panel shows, as pure functions (unit-tested in plain Node): applying the
// host's changes to the list, filtering and searching, grouping by task variation.

export interface TipsFilter {
  /** Case-insensitive substring of the text, the id or the variation. */
  readonly search: string;
  /** '' for every variation. */
  readonly variation: string;
  /** '' for every author; the policy's tips, or people's. */
  readonly author: '' | NonNullable<MemoryFilter['author']>;
  /** Deleted tips too (each with its history); off, only the tips retrieval can return. */
  readonly showDeleted?: boolean;
}

/** The author filter's choices (the schema's MemoryFilter authors), as the panel labels them. */
export const AUTHOR_FILTER_LABELS: Record<NonNullable<MemoryFilter['author']>, string> = {
  policy: 'Written by the policy',
  person: 'Written by people',
};

export const NO_FILTER: TipsFilter = { search: '', variation: '', author: '', showDeleted: false };

/** The list after the host's changes (newer versions win; deleted tips stay, marked; evicted ones leave). */
export function applyChanges(tips: readonly Tip[], changes: readonly MemoryChange[]): Tip[] {
  const byId = new Map(tips.map((tip) => [tip.id, tip]));
  applyTipChanges(byId, changes);
  return [...byId.values()];
}

export function filterTips(tips: readonly Tip[], filter: TipsFilter): Tip[] {
  const needle = filter.search.trim().toLowerCase();
  return tips.filter(
    (tip) =>
      (filter.showDeleted || !tip.deleted) &&
      (!filter.variation || tip.variationKey === filter.variation) &&
      (!filter.author ||
        (filter.author === POLICY_AUTHOR ? tip.author === POLICY_AUTHOR : isPersonAuthor(tip.author))) &&
      (!needle ||
        tip.text.toLowerCase().includes(needle) ||
        tip.id.toLowerCase().includes(needle) ||
        tip.variationKey.toLowerCase().includes(needle)),
  );
}

export interface VariationGroup {
  readonly variationKey: string;
  readonly tips: Tip[];
}

/** Groups by variation (sorted by key); within a group the highest score first (as retrieval ranks), then newest. */
export function groupByVariation(tips: readonly Tip[]): VariationGroup[] {
  const groups = new Map<string, Tip[]>();
  for (const tip of tips) {
    groups.set(tip.variationKey, [...(groups.get(tip.variationKey) ?? []), tip]);
  }
  return [...groups.entries()]
    .sort(([a], [b]) => a.localeCompare(b, undefined, { numeric: true }))
    .map(([variationKey, list]) => ({
      variationKey,
      tips: list.sort(
        (a, b) =>
          (b.score ?? -Infinity) - (a.score ?? -Infinity) || b.id.localeCompare(a.id, undefined, { numeric: true }),
      ),
    }));
}

/** How many tips each variation holds among `tips` (the filtered list, before the render limit). */
export function countByVariation(tips: readonly Tip[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const tip of tips) {
    counts.set(tip.variationKey, (counts.get(tip.variationKey) ?? 0) + 1);
  }
  return counts;
}

/**
 * A variation group's header count: the tips it holds, and how many of them are rendered when
 * the panel's render limit cut the group ("17 tips · 1 shown"), so a cut group never reads as small.
 */
export function groupCount(held: number, rendered: number): string {
  const tips = `${held} tip${held === 1 ? '' : 's'}`;
  return rendered < held ? `${tips} · ${rendered} shown` : tips;
}

/** Which score the card shows: the writing episode's final score, or none for a hand-added tip. */
export function scoreLabel(tip: Tip): string {
  return tip.score === null ? 'unscored' : `episode score ${formatScore(tip.score)}`;
}

export function scoreTitle(tip: Tip): string {
  return tip.score === null
    ? `Added by a person without a score; retrieval ranks it at ${SCORE_MAX}, the top of the score scale (${SCORE_SCALE})`
    : `The final score (${SCORE_SCALE}) of the episode that wrote this tip; retrieval ranks tips by it. A score written inside the tip text is the policy's own words, not this number.`;
}

export function formatScore(score: number | null): string {
  return score === null ? '–' : Number.isInteger(score) ? String(score) : fixed(score, 2);
}
