// Text a person is typing into a tip, kept in the webview's state (VS Code keeps it while the
// view is hidden, and across the reconnects that reload the tips), so no draft is ever lost to
// a dropped link or a reloaded view. A draft remembers the version it was written on, so a save
// made from a restored draft still meets the version check (and a conflict if the tip moved).

export interface TipDraft {
  readonly text: string;
  /** The version of the tip the person started from. */
  readonly baseVersion: number;
  /** The edit id of a save of this text that may not have been answered: sent again as is. */
  readonly editId?: string;
}

export type Drafts = Readonly<Record<string, TipDraft>>;

/** The drafts with one tip's draft set, or removed (undefined). */
export function withDraft(drafts: Drafts, tipId: string, draft: TipDraft | undefined): Drafts {
  const next: Record<string, TipDraft> = { ...drafts };
  if (draft) {
    next[tipId] = draft;
  } else {
    delete next[tipId];
  }
  return next;
}

/** The text of a new tip being written in the Add form. */
export interface AddDraft {
  readonly variationKey: string;
  readonly text: string;
  /** Set once Save was pressed: the add's edit id, reused if it is sent again. */
  readonly editId?: string;
}
