import type { Tip, TipVersion } from '../rpc/protocol';
import { POLICY_AUTHOR } from './tipRules';

// How a tip's authorship reads, in one place: the tips panel's cards and the Show Tip History
// document say it the same way.

/** How an author reads: the policy, or the person by name ("you" when the client named no one). */
export function authorName(author: string): string {
  return author === POLICY_AUTHOR ? 'the policy' : author;
}

/** The current version's author (`versionAuthor`; hosts before protocol 1.1.0 send only `author`). */
export function versionAuthor(tip: Tip): string {
  return tip.versionAuthor ?? tip.author;
}

/** "by the policy", "edited by Ada (v1 by the policy)", "deleted by you". */
export function authorLine(tip: Tip): string {
  const current = authorName(versionAuthor(tip));
  if (tip.version === 1) {
    return `by ${current}`;
  }
  const verb = tip.deleted ? 'deleted' : 'edited';
  return `${verb} by ${current} (v1 by ${authorName(tip.author)})`;
}

/** A tip's line in the palette's tip pick: "grow-plant/0 · v2 · edited by you (v1 by the policy)". */
export function tipPickDescription(tip: Tip): string {
  return `${tip.variationKey} · v${tip.version} · ${authorLine(tip)}`;
}

/** What each kind of version did, as the history reads it. */
const VERSION_DEEDS: Record<TipVersion['kind'], string> = {
  add: 'written',
  update: 'edited',
  delete: 'deleted',
  evict: 'evicted',
};

/** A line of the tip's history: "v1 · written by the policy", "v2 · edited by you", "v3 · deleted by Ada". */
export function versionLine(version: TipVersion): string {
  if (version.kind === 'evict') {
    return `v${version.version} · left its buffer (it was full)`; // the system's doing, not a person's
  }
  return `v${version.version} · ${VERSION_DEEDS[version.kind]} by ${authorName(version.author)}`;
}
