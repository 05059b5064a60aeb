import type {
  Author,
  MemoryChange,
  MemoryDeleteParams,
  MemoryUpdateParams,
  Tip,
  TipId,
  TipParams,
} from '../rpc/protocol';
import { ellipsize } from '../common/text';

// The facts about tips that the extension (TipsModel, the palette commands) and the Memory Tips
// webview share, written once; vscode-free, so the webview bundles it too.

/**
 * A person's edit of a tip, as memory.update takes it (the run is the current one); `editId`,
 * chosen once per save, makes a save sent again after a dropped link apply once.
 */
export type TipEdit = Pick<MemoryUpdateParams, 'tipId' | 'text' | 'expectedVersion' | 'editId'>;
/** A person's deletion of a tip, as memory.delete takes it. */
export type TipDeletion = Pick<MemoryDeleteParams, 'tipId' | 'expectedVersion' | 'editId'>;
/** One tip of the current run. */
export type TipRef = Pick<TipParams, 'tipId'>;

/** The author name the store records for tips the policy wrote, and for the system's evictions. */
export const POLICY_AUTHOR = 'policy' satisfies Author['kind'];
export const SYSTEM_AUTHOR = 'system' satisfies Author['kind'];

/** A person wrote it: any author name but the policy's and the system's. */
export function isPersonAuthor(author: string): boolean {
  return author !== POLICY_AUTHOR && author !== SYSTEM_AUTHOR;
}

/**
 * Applies the host's changes to tips kept by id: the newer version wins (a notification and a
 * response can cross, so an older copy never replaces a newer one). A deleted tip stays, marked
 * deleted, so it can still be found with its history; an evicted one leaves (a long run evicts
 * far more tips than it keeps, as memory.list leaves them out).
 */
export function applyTipChanges(tips: Map<TipId, Tip>, changes: readonly MemoryChange[]): void {
  for (const { change, tip } of changes) {
    if (change === 'evicted') {
      tips.delete(tip.id);
      continue;
    }
    const known = tips.get(tip.id);
    if (!known || known.version <= tip.version) {
      tips.set(tip.id, change === 'deleted' ? { ...tip, deleted: true } : tip);
    }
  }
}

/** The tips retrieval can return: not deleted. */
export function liveTips(tips: Iterable<Tip>): Tip[] {
  return [...tips].filter((tip) => !tip.deleted);
}

/** The question asked before a tip is deleted, from the palette or the Memory Tips view. */
export function deleteTipQuestion(tipId: TipId, tip: Tip | undefined): string {
  return `Delete tip ${tipId}${tip ? ` ("${ellipsize(tip.text, 80)}")` : ''}? Retrieval stops returning it at once; it stays in its history.`;
}
