import type { MemoryChange, Tip } from '../../src/rpc/protocol';

// What the Memory Tips panel shows, as pure functions (unit-tested in plain Node): applying the
// host's changes to the list, filtering and searching, grouping by task variation.

export interface TipsFilter {
  /** Case-insensitive substring of the text, the id or the variation. */
  readonly search: string;
  /** '' for every variation. */
  readonly variation: string;
  /** '' for every author; 'policy' or 'person'. */
  readonly author: '' | 'policy' | 'person';
}

export const NO_FILTER: TipsFilter = { search: '', variation: '', author: '' };

/** The list after the host's changes (newer versions win; deleted and evicted tips leave). */
export function applyChanges(tips: readonly Tip[], changes: readonly MemoryChange[]): Tip[] {
  const byId = new Map(tips.map((tip) => [tip.id, tip]));
  for (const { change, tip } of changes) {
    if (change === 'deleted' || change === 'evicted') {
      byId.delete(tip.id);
    } else {
      const known = byId.get(tip.id);
      if (!known || known.version <= tip.version) {
        byId.set(tip.id, tip);
      }
    }
  }
  return [...byId.values()];
}

export function isPersonAuthor(author: string): boolean {
  return author !== 'policy' && author !== 'system';
}

export function filterTips(tips: readonly Tip[], filter: TipsFilter): Tip[] {
  const needle = filter.search.trim().toLowerCase();
  return tips.filter(
    (tip) =>
      (!filter.variation || tip.variationKey === filter.variation) &&
      (!filter.author || (filter.author === 'policy' ? tip.author === 'policy' : isPersonAuthor(tip.author))) &&
      (!needle || tip.text.toLowerCase().includes(needle) || tip.id.toLowerCase().includes(needle) || tip.variationKey.toLowerCase().includes(needle)),
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
      tips: list.sort((a, b) => (b.score ?? -Infinity) - (a.score ?? -Infinity) || b.id.localeCompare(a.id, undefined, { numeric: true })),
    }));
}

export function formatScore(score: number | null): string {
  return score === null ? '–' : Number.isInteger(score) ? String(score) : score.toFixed(2);
}
