import { Emitter } from '../common/event';
import { Disposable } from '../common/lifecycle';
import type { HostApi } from '../host/hostApi';
import { saveAcrossReconnects } from './retriedSave';
import { describeError, RpcError } from '../rpc/errors';
import { Notifications, Requests } from '../rpc/methods';
import type { MemoryChange, RunState, Tip, TipResult, TipVersion } from '../rpc/protocol';
import type { RunsModel } from '../runs/runsModel';
import { applyTipChanges, liveTips, type TipDeletion, type TipEdit } from './tipRules';

// The memory tips of the current run, free of vscode: loaded with memory.list, kept live by
// memory/changed (tips the policy writes during training appear as they are written), and
// edited through memory.add / update / delete with the version the person read, so an edit
// made on a stale copy comes back as a conflict carrying the current tip instead of silently
// overwriting someone else's (or the policy's) change. Deleted tips are kept too, marked
// deleted (memory.list with includeDeleted), so they stay findable with their history; list()
// and get() answer the live ones, what retrieval can return and what can be edited.

/** Tips listed at most; a run keeps at most 1,000 entries per variation. */
const MAX_TIPS = 20_000;
const PAGE = 1_000;

export type TipsChange =
  | { readonly kind: 'reset'; readonly runId: string | undefined; readonly tips: readonly Tip[] }
  | { readonly kind: 'changes'; readonly runId: string; readonly changes: readonly MemoryChange[] };

export type EditOutcome =
  /** `replayed`: the link dropped before the answer and the host had applied it already. */
  | { readonly kind: 'saved'; readonly tip: Tip; readonly replayed?: boolean }
  /** Someone changed the tip since it was read: `current` is how it is now; nothing was written. */
  | { readonly kind: 'conflict'; readonly current: Tip; readonly attempted: string };

export class TipsModel extends Disposable {
  private runId: string | undefined;
  /** The current run's state as last seen, to notice it start running again. */
  private runState: RunState | undefined;
  private readonly tips = new Map<string, Tip>();
  private loading: Promise<void> | undefined;
  private loadError: string | undefined;
  private readonly _onDidChange = this._register(new Emitter<TipsChange>());
  readonly onDidChange = this._onDidChange.event;

  /**
   * `personName`: who a person's edits are by (personName.ts: the VS Code account's name), sent
   * as their author unless a caller names one; undefined leaves it to the host's "you".
   */
  constructor(
    private readonly host: HostApi,
    private readonly runs: RunsModel,
    private readonly personName: () => Promise<string | undefined> = () => Promise.resolve(undefined),
  ) {
    super();
    this._register(
      runs.onDidChangeCurrent((entry) => {
        const state = entry?.info.state;
        // A run that goes (back) to running has had its memory opened by its trainer, and a
        // resume cuts the memory back to its checkpoint: tips written after it are gone, and no
        // memory/changed names them. The list read before (at the reconnect of a restarted host)
        // may hold them, so it is read again.
        const reopened = state === 'running' && this.runState !== undefined && this.runState !== 'running';
        const other = entry?.info.runId !== this.runId;
        this.runState = state;
        if (other || reopened) {
          void this.load(entry?.info.runId);
        }
      }),
    );
    // A reconnect reloads the list (tips written meanwhile appear); a dropped link keeps what
    // is shown, greyed by the view, instead of emptying it.
    this._register(host.onDidConnect(() => void this.load(this.runs.current?.info.runId)));
    this._register(
      host.health.onDidChange((health) => {
        if (health.kind === 'none' && this.tips.size) {
          this.tips.clear(); // stopped on purpose: nothing to show
          this._onDidChange.fire({ kind: 'reset', runId: this.runId, tips: [] });
        }
      }),
    );
    this._register(host.on(Notifications.memoryChanged, ({ runId, changes }) => this.apply(runId, changes)));
  }

  get currentRunId(): string | undefined {
    return this.runId;
  }

  get error(): string | undefined {
    return this.loadError;
  }

  /** The live tips, or with `includeDeleted` the deleted ones too. */
  list(options: { readonly includeDeleted?: boolean } = {}): Tip[] {
    return options.includeDeleted ? [...this.tips.values()] : liveTips(this.tips.values());
  }

  /** A live tip. */
  get(tipId: string): Tip | undefined {
    const tip = this.tips.get(tipId);
    return tip?.deleted ? undefined : tip;
  }

  /** A tip, live or deleted (its history can be read either way). */
  find(tipId: string): Tip | undefined {
    return this.tips.get(tipId);
  }

  /** Task variations a new tip can go to: those with tips, and the run's configured tasks. */
  variations(configured: readonly string[] = []): string[] {
    return [...new Set([...configured, ...this.list().map((tip) => tip.variationKey)])].sort();
  }

  /** (Re)reads every tip of a run; undefined clears the list. */
  load(runId: string | undefined): Promise<void> {
    const sameRun = runId === this.runId;
    this.runId = runId;
    this.loadError = undefined;
    if (!runId || !this.host.current) {
      if (!sameRun || !this.host.health.isInterrupted) {
        this.tips.clear(); // while reconnecting, the same run's tips stay on show
      }
      this._onDidChange.fire({ kind: 'reset', runId, tips: this.list({ includeDeleted: true }) });
      return Promise.resolve();
    }
    const loading = this.fetchAll(runId)
      .then((tips) => {
        if (this.runId !== runId) {
          return; // Another run was selected meanwhile.
        }
        this.tips.clear();
        for (const tip of tips) {
          this.tips.set(tip.id, tip);
        }
      })
      .catch((error) => {
        if (this.runId === runId) {
          this.loadError = describeError(error);
        }
      })
      .finally(() => {
        if (this.runId === runId) {
          this._onDidChange.fire({ kind: 'reset', runId, tips: this.list({ includeDeleted: true }) });
        }
      });
    this.loading = loading;
    return loading;
  }

  /** Resolves when the current load (if any) is done. */
  whenLoaded(): Promise<void> {
    return this.loading ?? Promise.resolve();
  }

  private async fetchAll(runId: string): Promise<Tip[]> {
    const tips: Tip[] = [];
    let cursor: string | undefined;
    do {
      const page = await this.host.request(Requests.memoryList, {
        runId,
        limit: PAGE,
        filter: { includeDeleted: true },
        ...(cursor ? { cursor } : {}),
      });
      tips.push(...page.items);
      cursor = page.nextCursor ?? undefined;
    } while (cursor && tips.length < MAX_TIPS);
    return tips;
  }

  private apply(runId: string, changes: readonly MemoryChange[]): void {
    if (runId !== this.runId) {
      return;
    }
    applyTipChanges(this.tips, changes);
    this._onDidChange.fire({ kind: 'changes', runId, changes });
  }

  private requireRun(): string {
    if (!this.runId) {
      throw new Error('no run is open; start or open a run first');
    }
    return this.runId;
  }

  async add(variationKey: string, text: string, named?: string, editId?: string): Promise<Tip> {
    const runId = this.requireRun();
    const author = named ?? (await this.personName());
    const params = { runId, variationKey, text, ...(author ? { author } : {}), ...(editId ? { editId } : {}) };
    const { tip } = await this.send(() => this.host.request(Requests.memoryAdd, params), editId);
    this.tips.set(tip.id, tip);
    this._onDidChange.fire({
      kind: 'changes',
      runId,
      changes: [{ change: 'added', tip, by: { kind: 'person', name: author ?? '' } }],
    });
    return tip;
  }

  /**
   * Saves a person's edit made on `expectedVersion`; a stale version is a conflict, not an error.
   * With an edit id the save survives a dropped link: it is sent again after the reconnect with
   * the same id, and the host answers what it recorded (retriedSave.ts).
   */
  async update(edit: TipEdit, named?: string): Promise<EditOutcome> {
    const author = named ?? (await this.personName());
    return this.edit('updated', edit.text, author, edit.editId, (runId) =>
      this.host.request(Requests.memoryUpdate, { runId, ...edit, ...(author ? { author } : {}) }),
    );
  }

  async delete(deletion: TipDeletion, named?: string): Promise<EditOutcome> {
    const author = named ?? (await this.personName());
    const withId = { editId: newEditId(), ...deletion };
    return this.edit('deleted', '', author, withId.editId, (runId) =>
      this.host.request(Requests.memoryDelete, { runId, ...withId, ...(author ? { author } : {}) }),
    );
  }

  /** One attempt without an edit id; with one, attempts until the host answers (same id each time). */
  private send<T>(attempt: () => Promise<T>, editId: string | undefined): Promise<T> {
    return editId ? saveAcrossReconnects(attempt, this.host.health) : attempt();
  }

  /** A versioned edit: applied at once when saved; on a conflict the tip as it is now replaces the stale copy. */
  private async edit(
    change: 'updated' | 'deleted',
    attempted: string,
    author: string | undefined,
    editId: string | undefined,
    send: (runId: string) => Promise<TipResult>,
  ): Promise<EditOutcome> {
    const runId = this.requireRun();
    try {
      const { tip, replayed } = await this.send(() => send(runId), editId);
      this.apply(runId, [{ change, tip, by: { kind: 'person', name: author ?? '' } }]);
      return { kind: 'saved', tip, ...(replayed ? { replayed } : {}) };
    } catch (error) {
      const current = error instanceof RpcError ? error.conflictingTip : undefined;
      if (current) {
        this.apply(runId, [{ change: 'updated', tip: current, by: { kind: 'person', name: '' } }]);
        return { kind: 'conflict', current, attempted };
      }
      throw error;
    }
  }

  async history(tipId: string): Promise<TipVersion[]> {
    const runId = this.requireRun();
    const { versions } = await this.host.request(Requests.memoryHistory, { runId, tipId });
    return [...versions];
  }
}

/** A fresh edit id (one per save, reused by every retry of it). */
export function newEditId(): string {
  return globalThis.crypto.randomUUID();
}
