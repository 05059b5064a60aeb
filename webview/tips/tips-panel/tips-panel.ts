import { LitElement, html, nothing, type PropertyValues, type TemplateResult } from 'lit';
import { customElement, property, state } from 'lit/decorators.js';
import { repeat } from 'lit/directives/repeat.js';
import '@vscode-elements/elements/dist/vscode-button/index.js';
import '@vscode-elements/elements/dist/vscode-textfield/index.js';
import '@vscode-elements/elements/dist/vscode-textarea/index.js';
import '@vscode-elements/elements/dist/vscode-single-select/index.js';
import '@vscode-elements/elements/dist/vscode-option/index.js';
import '@vscode-elements/elements/dist/vscode-collapsible/index.js';
import '@vscode-elements/elements/dist/vscode-checkbox/index.js';
import type { VscodeCheckbox } from '@vscode-elements/elements/dist/vscode-checkbox/vscode-checkbox.js';
import type { VscodeTextfield } from '@vscode-elements/elements/dist/vscode-textfield/vscode-textfield.js';
import type { VscodeTextarea } from '@vscode-elements/elements/dist/vscode-textarea/vscode-textarea.js';
import type { VscodeSingleSelect } from '@vscode-elements/elements/dist/vscode-single-select/vscode-single-select.js';
import type { HostState } from '../../../src/host/hostState';
import type { MemoryChange, Tip, TipVersion } from '../../../src/rpc/protocol';
import type { ConnectionView, TipsPanelCommand } from '../../../src/tips/tipsMessages';
import { withDraft, type AddDraft, type Drafts, type TipDraft } from '../drafts';
import '../tip-card';
import type { TipCard, TipEditState } from '../tip-card/tip-card';
import {
  applyChanges,
  AUTHOR_FILTER_LABELS,
  countByVariation,
  filterTips,
  groupByVariation,
  groupCount,
  NO_FILTER,
  type TipsFilter,
} from '../tipsView';
import { tipsPanelStyles } from './tips-panel.styles';

export type RunCommandEvent = CustomEvent<{ readonly command: TipsPanelCommand }>;
export type AddTipEvent = CustomEvent<{
  readonly variationKey: string;
  readonly text: string;
  readonly editId: string;
}>;
export type FilterChangeEvent = CustomEvent<TipsFilter>;
/** Drafts changed (a keystroke in an editor, or the Add form); index.ts keeps them in the view state. */
export type DraftsChangeEvent = CustomEvent<{ readonly drafts: Drafts; readonly addDraft: AddDraft | undefined }>;

/** Cards rendered per filter before "Show more": thousands of tips must not stall the view. */
const RENDER_LIMIT = 150;

/**
 * The Memory Tips panel: the current run's tips grouped by task variation, with a search box,
 * variation and author filters and "Show deleted" (deleted tips stay, with their history), an Add form, and a card per tip (tip-card) to edit, delete or
 * read the history. The panel only renders and fires events; index.ts talks to the extension
 * and hands results back through the methods below.
 *
 * @fires empo2-run-command - a button asks the extension to run one of its commands
 * @fires empo2-tip-add - the Add form was submitted
 * @fires empo2-filter-change - the filters changed (index.ts keeps them across reloads)
 */
@customElement('empo2-tips-panel')
export class TipsPanel extends LitElement {
  static override styles = tipsPanelStyles;

  @property({ attribute: 'host-state' }) hostState: HostState = 'stopped';
  @property({ attribute: false }) runId: string | undefined;
  @property({ attribute: false }) tips: readonly Tip[] = [];
  @property({ attribute: false }) variations: readonly string[] = [];
  @property({ attribute: false }) error: string | undefined;
  @property({ attribute: false }) filter: TipsFilter = NO_FILTER;
  @property({ attribute: false }) connection: ConnectionView = { kind: 'connected' };
  /** Open editors' texts by tip id, and the Add form's, restored from the view state. */
  @property({ attribute: false }) drafts: Drafts = {};
  @property({ attribute: false }) addDraft: AddDraft | undefined;

  @state() private editStates = new Map<string, TipEditState>();
  @state() private histories = new Map<string, readonly TipVersion[]>();
  @state() private highlightedId: string | undefined;
  @state() private adding = false;
  @state() private addState: { busy?: boolean; error?: string } = {};
  @state() private renderLimit = RENDER_LIMIT;

  // -- called by index.ts ------------------------------------------------------------------------

  applyChanges(runId: string, changes: readonly MemoryChange[]): void {
    if (runId === this.runId) {
      this.tips = applyChanges(this.tips, changes);
    }
  }

  setEditState(tipId: string, edit: TipEditState | undefined): void {
    this.editStates = withEntry(this.editStates, tipId, edit);
  }

  /** A save went through: close the editor and clear any conflict. */
  editSaved(tipId: string): void {
    this.setEditState(tipId, undefined);
    this.card(tipId)?.finishEditing();
  }

  setHistory(tipId: string, versions: readonly TipVersion[] | undefined): void {
    this.histories = withEntry(this.histories, tipId, versions);
  }

  hasHistory(tipId: string): boolean {
    return this.histories.has(tipId);
  }

  setAddState(state: { busy?: boolean; error?: string; done?: boolean }): void {
    this.addState = state.done ? {} : state;
    if (state.done) {
      this.adding = false;
      this.addDraft = undefined;
      this.fireDrafts();
    }
  }

  /** Reopens the Add form with a kept draft (a reload of the view). */
  restoreAdding(): void {
    this.adding = this.addDraft !== undefined;
  }

  /** Scrolls to a tip, clearing filters that would hide it, and highlights it. */
  async reveal(tipId: string): Promise<void> {
    const tip = this.tips.find((t) => t.id === tipId);
    if (tip && !filterTips([tip], this.filter).length) {
      this.setFilter({ ...NO_FILTER, showDeleted: Boolean(tip.deleted) });
    }
    this.highlightedId = tipId;
    this.renderLimit = Math.max(this.renderLimit, this.tips.length);
    await this.updateComplete;
    this.card(tipId)?.scrollIntoView({ block: 'center' });
  }

  /**
   * Opens the Add form where the person looks: it sits under the sticky header, at the top of the
   * list, so a list scrolled down is brought back to the top and the text box takes the focus.
   */
  async openAddForm(): Promise<void> {
    this.adding = true;
    await this.updateComplete;
    window.scrollTo({ top: 0 });
    this.renderRoot.querySelector<VscodeTextarea>('.add-text')?.focus();
  }

  /** Opens a tip's editor (the Edit Tip command, with the panel visible). */
  async startEditing(tipId: string): Promise<void> {
    await this.reveal(tipId);
    this.card(tipId)?.startEditing();
  }

  // -- the context menu ------------------------------------------------------------------------

  override connectedCallback(): void {
    super.connectedCallback();
    this.addEventListener('contextmenu', this.onContextMenu);
  }

  override disconnectedCallback(): void {
    this.removeEventListener('contextmenu', this.onContextMenu);
    super.disconnectedCallback();
  }

  /**
   * VS Code reads `data-vscode-context` from the element a right-click lands on, as the page sees
   * it: this panel's host (the tip cards are inside its shadow root). So the panel says which tip
   * was clicked, just before the event reaches VS Code's listener on the window; "Rerun
   * Off-Policy Update…" (package.json `webview/context`) gets the tip and its variation.
   */
  private readonly onContextMenu = (event: Event): void => {
    const card = event
      .composedPath()
      .find((el): el is TipCard => el instanceof HTMLElement && el.tagName === 'EMPO2-TIP-CARD');
    if (card?.tip) {
      this.dataset.vscodeContext = JSON.stringify({
        webviewSection: 'tip',
        tipId: card.tip.id,
        variationKey: card.tip.variationKey,
        runId: this.runId,
        preventDefaultContextMenuItems: true,
      });
    } else {
      delete this.dataset.vscodeContext;
    }
  };

  // -- rendering --------------------------------------------------------------------------------

  protected override willUpdate(changed: PropertyValues<this>): void {
    if (changed.has('runId') && changed.get('runId') !== undefined) {
      this.editStates = new Map();
      this.histories = new Map();
      this.highlightedId = undefined;
    }
  }

  private get offline(): boolean {
    return this.connection.kind === 'reconnecting' || this.connection.kind === 'lost';
  }

  override render(): TemplateResult {
    if (this.offline && !this.tips.length) {
      // The host is there, the link is not: waiting is the advice, not "start the host".
      return this.renderEmpty(
        this.connection.kind === 'lost'
          ? 'The connection to the training host is lost.'
          : 'Reconnecting to the training host…',
        [],
      );
    }
    if (this.hostState !== 'running' && !this.tips.length) {
      return this.renderEmpty(
        this.hostState === 'starting'
          ? 'The training host is starting…'
          : 'Memory tips appear here once a run is open.',
        this.hostState === 'starting'
          ? []
          : [
              ['Start Host', 'empo2.startHost'],
              ['Open Run Folder', 'empo2.openRunFolder'],
            ],
      );
    }
    if (!this.runId) {
      return this.renderEmpty('No run is open. Start a training run, or open a finished one.', [
        ['New Training Run', 'empo2.newRun'],
        ['Open Run Folder', 'empo2.openRunFolder'],
      ]);
    }
    const shown = filterTips(this.tips, this.filter);
    const live = this.tips.filter((tip) => !tip.deleted).length;
    const deleted = this.tips.length - live;
    const groups = groupByVariation(shown.slice(0, this.renderLimit));
    const held = countByVariation(shown);
    return html`
      ${
        this.offline
          ? html`<p class="connection" role="status" title=${this.connection.detail ?? ''}>
            ${this.connection.kind === 'lost' ? 'connection lost' : 'reconnecting…'} — the tips below may be out of date; your drafts are kept.
          </p>`
          : nothing
      }
      <header class=${this.offline ? 'offline' : ''}>
        <div class="run" title="Tips of this run">${this.runId} · ${live} tip${live === 1 ? '' : 's'}${deleted ? ` · ${deleted} deleted` : ''}</div>
        <div class="filters">
          <vscode-textfield
            class="search"
            placeholder="Search tips"
            aria-label="Search tips"
            .value=${this.filter.search}
            @input=${(event: Event) => this.setFilter({ ...this.filter, search: (event.target as VscodeTextfield).value })}
          ></vscode-textfield>
          <vscode-single-select
            aria-label="Task variation"
            .value=${this.filter.variation}
            @change=${(event: Event) => this.setFilter({ ...this.filter, variation: (event.target as VscodeSingleSelect).value })}
          >
            <vscode-option value="">All variations</vscode-option>
            ${this.allVariations().map((key) => html`<vscode-option value=${key}>${key}</vscode-option>`)}
          </vscode-single-select>
          <vscode-single-select
            aria-label="Author"
            .value=${this.filter.author}
            @change=${(event: Event) => this.setFilter({ ...this.filter, author: (event.target as VscodeSingleSelect).value as TipsFilter['author'] })}
          >
            <vscode-option value="">Any author</vscode-option>
            ${Object.entries(AUTHOR_FILTER_LABELS).map(([author, label]) => html`<vscode-option value=${author}>${label}</vscode-option>`)}
          </vscode-single-select>
          <vscode-checkbox
            class="show-deleted"
            label="Show deleted"
            title="Deleted tips are never retrieved; their text and every version stay readable"
            .checked=${Boolean(this.filter.showDeleted)}
            @change=${(event: Event) => this.setFilter({ ...this.filter, showDeleted: (event.target as VscodeCheckbox).checked })}
          ></vscode-checkbox>
          <vscode-button @click=${() => (this.adding ? (this.adding = false) : void this.openAddForm())}>${this.adding ? 'Cancel' : 'Add Tip'}</vscode-button>
        </div>
      </header>
      ${this.adding ? this.renderAddForm() : nothing}
      ${this.error ? html`<p class="error" role="alert">${this.error}</p>` : nothing}
      ${
        shown.length === 0
          ? html`<p class="muted">${this.tips.length ? `No tip matches the filters${deleted && !this.filter.showDeleted ? ' (deleted tips are hidden: Show deleted)' : ''}.` : 'No tips yet in this run. The policy writes one after every training episode; you can add your own.'}</p>`
          : nothing
      }
      ${repeat(
        groups,
        (group) => group.variationKey,
        (group) => html`
          <vscode-collapsible open heading=${group.variationKey} description=${groupCount(held.get(group.variationKey) ?? group.tips.length, group.tips.length)}>
            <div class="cards">
              ${repeat(
                group.tips,
                (tip) => tip.id,
                (tip) => html`<empo2-tip-card
                  data-tip-id=${tip.id}
                  .tip=${tip}
                  .runId=${this.runId ?? ''}
                  .edit=${this.editStates.get(tip.id) ?? {}}
                  .history=${this.histories.get(tip.id)}
                  .savedDraft=${this.drafts[tip.id]}
                  ?offline=${this.offline}
                  ?highlighted=${tip.id === this.highlightedId}
                  @empo2-tip-draft=${(event: CustomEvent<{ tipId: string; draft: TipDraft | undefined }>) => this.setDraft(event.detail.tipId, event.detail.draft)}
                ></empo2-tip-card>`,
              )}
            </div>
          </vscode-collapsible>
        `,
      )}
      ${
        shown.length > this.renderLimit
          ? html`<vscode-button secondary class="more" @click=${() => (this.renderLimit += RENDER_LIMIT * 4)}>
            Show ${Math.min(RENDER_LIMIT * 4, shown.length - this.renderLimit)} more of ${shown.length - this.renderLimit}
          </vscode-button>`
          : nothing
      }
    `;
  }

  private renderEmpty(message: string, actions: Array<[string, TipsPanelCommand]>): TemplateResult {
    return html`
      <section class="empty" aria-label="Memory tips">
        <p>${message}</p>
        <p class="muted">
          Tips are short lessons the policy writes for itself after each episode and reads back in
          later prompts. Here you can read them, edit them, add your own and see every version.
        </p>
        <div class="actions">
          ${actions.map(
            ([label, command], index) =>
              html`<vscode-button ?secondary=${index > 0} @click=${() => this.runCommand(command)}>${label}</vscode-button>`,
          )}
        </div>
      </section>
    `;
  }

  private renderAddForm(): TemplateResult {
    const variations = this.allVariations();
    return html`
      <form class="add" @submit=${(event: Event) => event.preventDefault()}>
        <vscode-single-select class="add-variation" aria-label="Variation of the new tip" combobox .value=${this.addDraft?.variationKey || this.filter.variation || variations[0] || ''}>
          ${variations.map((key) => html`<vscode-option value=${key}>${key}</vscode-option>`)}
        </vscode-single-select>
        <vscode-textarea
          class="add-text"
          rows="3"
          placeholder="What should the agent remember for this task?"
          aria-label="Text of the new tip"
          .value=${this.addDraft?.text ?? ''}
          @input=${(event: Event) => this.setAddDraft((event.target as VscodeTextarea).value)}
        ></vscode-textarea>
        ${this.addState.error ? html`<div class="error" role="alert">${this.addState.error}</div>` : nothing}
        <div class="actions">
          <vscode-button ?disabled=${this.addState.busy} @click=${() => this.submitAdd()}>Save Tip</vscode-button>
        </div>
      </form>
    `;
  }

  private submitAdd(): void {
    const variationKey = this.renderRoot.querySelector<VscodeSingleSelect>('.add-variation')?.value.trim() ?? '';
    const text = this.renderRoot.querySelector<VscodeTextarea>('.add-text')?.value.trim() ?? '';
    if (!variationKey || !text) {
      this.addState = { error: 'Choose a variation and write the tip first.' };
      return;
    }
    // The same edit id for this text until it is saved: a retried add lands once.
    const editId = this.addDraft?.text === text && this.addDraft.editId ? this.addDraft.editId : crypto.randomUUID();
    this.addDraft = { variationKey, text, editId };
    this.fireDrafts();
    this.dispatchEvent(
      new CustomEvent('empo2-tip-add', {
        detail: { variationKey, text, editId },
        bubbles: true,
        composed: true,
      }) as AddTipEvent,
    );
  }

  private setDraft(tipId: string, draft: TipDraft | undefined): void {
    this.drafts = withDraft(this.drafts, tipId, draft);
    this.fireDrafts();
  }

  private setAddDraft(text: string): void {
    const variationKey = this.renderRoot.querySelector<VscodeSingleSelect>('.add-variation')?.value.trim() ?? '';
    this.addDraft = text ? { variationKey, text } : undefined; // new text: a new edit id at Save
    this.fireDrafts();
  }

  private fireDrafts(): void {
    this.dispatchEvent(
      new CustomEvent('empo2-drafts-change', {
        detail: { drafts: this.drafts, addDraft: this.addDraft },
        bubbles: true,
        composed: true,
      }) as DraftsChangeEvent,
    );
  }

  private allVariations(): string[] {
    return [...new Set([...this.variations, ...this.tips.map((t) => t.variationKey)])].sort((a, b) =>
      a.localeCompare(b, undefined, { numeric: true }),
    );
  }

  private setFilter(filter: TipsFilter): void {
    this.filter = filter;
    this.renderLimit = RENDER_LIMIT;
    this.dispatchEvent(
      new CustomEvent('empo2-filter-change', { detail: filter, bubbles: true, composed: true }) as FilterChangeEvent,
    );
  }

  private card(tipId: string): TipCard | null {
    return this.renderRoot.querySelector<TipCard>(`empo2-tip-card[data-tip-id="${CSS.escape(tipId)}"]`);
  }

  private runCommand(command: TipsPanelCommand): void {
    this.dispatchEvent(
      new CustomEvent('empo2-run-command', { detail: { command }, bubbles: true, composed: true }) as RunCommandEvent,
    );
  }
}

declare global {
  interface HTMLElementTagNameMap {
    'empo2-tips-panel': TipsPanel;
  }
  interface HTMLElementEventMap {
    'empo2-run-command': RunCommandEvent;
    'empo2-tip-add': AddTipEvent;
    'empo2-filter-change': FilterChangeEvent;
    'empo2-drafts-change': DraftsChangeEvent;
  }
}

/** A copy of `map` with `key` set to `value`, or without it (a new object, so lit re-renders). */
function withEntry<V>(map: ReadonlyMap<string, V>, key: string, value: V | undefined): Map<string, V> {
  const next = new Map(map);
  if (value === undefined) {
    next.delete(key);
  } else {
    next.set(key, value);
  }
  return next;
}
