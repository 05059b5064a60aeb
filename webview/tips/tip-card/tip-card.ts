import { LitElement, html, nothing, type TemplateResult } from 'lit';
import { customElement, property, state } from 'lit/decorators.js';
import '@vscode-elements/elements/dist/vscode-button/index.js';
import '@vscode-elements/elements/dist/vscode-textarea/index.js';
import type { VscodeTextarea } from '@vscode-elements/elements/dist/vscode-textarea/vscode-textarea.js';
import type { Tip, TipVersion } from '../../../src/rpc/protocol';
import type { TipDraft } from '../drafts';
import { isPersonAuthor, POLICY_AUTHOR, type TipDeletion, type TipEdit, type TipRef } from '../../../src/tips/tipRules';
import { authorLine, authorName, versionAuthor, versionLine } from '../../../src/tips/tipWords';
import { scoreLabel, scoreTitle } from '../tipsView';
import { tipCardStyles } from './tip-card.styles';

/** What the panel tells a card about an edit in flight. */
export interface TipEditState {
  readonly busy?: boolean;
  /** Someone changed the tip while this person edited it: both texts, for them to choose. */
  readonly conflict?: { readonly current: Tip; readonly attempted: string };
  readonly error?: string;
}

export interface TipCardEvents {
  'empo2-tip-save': CustomEvent<TipEdit & { readonly editId: string }>;
  /** The text in the editor changed, or the editor closed (draft undefined): the panel keeps it. */
  'empo2-tip-draft': CustomEvent<{ readonly tipId: string; readonly draft: TipDraft | undefined }>;
  'empo2-tip-delete': CustomEvent<TipDeletion>;
  'empo2-tip-history': CustomEvent<TipRef>;
  'empo2-tip-discard-conflict': CustomEvent<TipRef>;
  'empo2-open-episode': CustomEvent<{ readonly runId: string; readonly episodeId: string }>;
}

/**
 * One tip: text, score, version, author, and a link to the episode that wrote it; Edit turns the
 * text into a text area (Save / Cancel), History lists every version, Delete asks first. On a
 * conflict it shows the person's text next to the current one: keep mine, take theirs, or merge
 * by hand.
 *
 * @fires empo2-tip-save, empo2-tip-delete, empo2-tip-history, empo2-tip-discard-conflict, empo2-open-episode
 */
@customElement('empo2-tip-card')
export class TipCard extends LitElement {
  static override styles = tipCardStyles;

  @property({ attribute: false }) tip!: Tip;
  @property({ attribute: false }) runId = '';
  @property({ attribute: false }) edit: TipEditState = {};
  @property({ attribute: false }) history: readonly TipVersion[] | undefined;
  @property({ type: Boolean, reflect: true }) highlighted = false;
  /** A draft kept from before (a reload of the view, a reconnect): the editor reopens with it. */
  @property({ attribute: false }) savedDraft: TipDraft | undefined;
  /** The link to the host is down: the card is greyed, edits wait. */
  @property({ type: Boolean, reflect: true }) offline = false;

  @state() private editing = false;
  /** The text typed so far, as the field's input events report it. */
  @state() private draft = '';
  /**
   * The text the field starts from when the editor opens (the tip, a kept draft, the person's
   * text after a conflict). The field is bound to this, never to `draft`: a re-render while a
   * person types (a tip arriving, a reset of the list, a kept draft coming back from the panel)
   * must not write an older text into the field they are typing in.
   */
  @state() private fieldSeed = { text: '' };
  private baseVersion = 0;
  private editId: string | undefined;

  override connectedCallback(): void {
    super.connectedCallback();
    if (this.savedDraft && !this.editing) {
      this.draft = this.savedDraft.text;
      this.fieldSeed = { text: this.draft };
      this.baseVersion = this.savedDraft.baseVersion;
      this.editId = this.savedDraft.editId;
      this.editing = true;
    }
  }

  /** Opens the editor (the Edit Tip command asks for this). */
  startEditing(): void {
    this.draft = this.tip.text;
    this.fieldSeed = { text: this.draft };
    this.baseVersion = this.tip.version;
    this.editId = undefined;
    this.editing = true;
    this.keepDraft();
    void this.updateComplete.then(() => this.renderRoot.querySelector<VscodeTextarea>('vscode-textarea')?.focus());
  }

  /** The panel calls this once a save went through. */
  finishEditing(): void {
    this.stopEditing();
  }

  private stopEditing(): void {
    this.editing = false;
    this.editId = undefined;
    this.fire('empo2-tip-draft', { tipId: this.tip.id, draft: undefined });
  }

  private keepDraft(): void {
    const draft: TipDraft = {
      text: this.draft,
      baseVersion: this.baseVersion,
      ...(this.editId ? { editId: this.editId } : {}),
    };
    this.fire('empo2-tip-draft', { tipId: this.tip.id, draft });
  }

  override render(): TemplateResult {
    const tip = this.tip;
    const provenance = tip.provenance ?? {};
    const episode = typeof provenance.episode === 'string' ? provenance.episode : undefined;
    const run = typeof provenance.run === 'string' ? provenance.run : this.runId;
    return html`
      ${tip.deleted ? html`<p class="deleted-note" data-testid="tip-deleted">Deleted: retrieval no longer returns it.</p>` : nothing}
      ${this.editing ? this.renderEditor() : html`<p class="text ${tip.deleted ? 'deleted' : ''}" data-testid="tip-text">${tip.text}</p>`}
      <div class="meta">
        <span data-testid="tip-score" title=${scoreTitle(tip)}>${scoreLabel(tip)}</span>
        <span>v${tip.version}</span>
        <span data-testid="tip-author" class=${isPersonAuthor(versionAuthor(tip)) ? 'author-person' : ''} title=${tip.version > 1 ? `v1 by ${authorName(tip.author)}; Show History lists every version` : ''}
          >${authorLine(tip)}</span
        >
        ${
          episode
            ? html`<a role="link" tabindex="0" title="Open the episode that wrote this tip" @click=${() => this.openEpisode(run, episode)}
              >from ${episode}${provenance.step !== undefined ? `, step ${provenance.step}` : ''}</a
            >`
            : nothing
        }
        <span class="id">${tip.id}</span>
      </div>
      ${this.edit.conflict ? this.renderConflict(this.edit.conflict) : nothing}
      ${this.edit.error ? html`<div class="error" role="alert">${this.edit.error}</div>` : nothing}
      ${
        this.editing
          ? nothing
          : html`<div class="actions">
            ${tip.deleted ? nothing : html`<vscode-button secondary @click=${() => this.startEditing()}>Edit</vscode-button>`}
            <vscode-button secondary @click=${() => this.fire('empo2-tip-history', { tipId: tip.id })}>
              ${this.history ? 'Hide History' : 'History'}
            </vscode-button>
            ${
              tip.deleted
                ? nothing
                : html`<vscode-button secondary @click=${() => this.fire('empo2-tip-delete', { tipId: tip.id, expectedVersion: tip.version })}>Delete</vscode-button>`
            }
          </div>`
      }
      ${this.history ? this.renderHistory(this.history) : nothing}
    `;
  }

  private renderEditor(): TemplateResult {
    return html`
      <vscode-textarea
        rows="3"
        aria-label="Tip text"
        .value=${this.fieldSeed.text}
        @input=${(event: Event) => {
          this.draft = (event.target as VscodeTextarea).value;
          this.editId = undefined; // new text, a new edit
          this.keepDraft();
        }}
        @keydown=${(event: KeyboardEvent) => {
          if (event.key === 'Enter' && (event.ctrlKey || event.metaKey)) {
            this.save(this.baseVersion);
          } else if (event.key === 'Escape' && !this.edit.busy) {
            this.stopEditing();
          }
        }}
      ></vscode-textarea>
      ${this.edit.busy ? html`<div class="saving" role="status">${this.offline ? 'Saving… waiting for the connection to the host; your text is kept.' : 'Saving…'}</div>` : nothing}
      <div class="actions">
        <vscode-button ?disabled=${this.edit.busy || !this.draft.trim()} @click=${() => this.save(this.baseVersion)}>Save</vscode-button>
        <vscode-button secondary ?disabled=${this.edit.busy} @click=${() => this.stopEditing()}>Cancel</vscode-button>
      </div>
    `;
  }

  private renderConflict(conflict: NonNullable<TipEditState['conflict']>): TemplateResult {
    const current = conflict.current;
    return html`
      <div class="conflict" role="alert">
        <div>Tip ${current.id} changed while you edited it (now v${current.version}, by ${current.author === POLICY_AUTHOR ? 'the policy' : 'someone else'}). Nothing was saved; choose a text.</div>
        <div class="texts">
          <div><h4>Yours</h4><pre data-testid="conflict-mine">${conflict.attempted}</pre></div>
          <div><h4>Current (v${current.version})</h4><pre data-testid="conflict-theirs">${current.text}</pre></div>
        </div>
        <div class="actions">
          <vscode-button @click=${() => {
            this.editId = undefined;
            this.save(current.version, conflict.attempted);
          }}>Keep Mine</vscode-button>
          <vscode-button secondary @click=${() => {
            this.stopEditing();
            this.fire('empo2-tip-discard-conflict', { tipId: current.id });
          }}>Keep Current</vscode-button>
          <vscode-button secondary @click=${() => {
            this.draft = conflict.attempted;
            this.fieldSeed = { text: this.draft };
            this.baseVersion = current.version;
            this.editId = undefined;
            this.editing = true;
            this.keepDraft();
            this.fire('empo2-tip-discard-conflict', { tipId: current.id });
          }}>Edit Again</vscode-button>
        </div>
      </div>
    `;
  }

  private renderHistory(versions: readonly TipVersion[]): TemplateResult {
    // A plain list: each line opens with its version number ("v2 · edited by you").
    return html`<ul class="history" aria-label="History of ${this.tip.id}">
      ${versions.map((v) => html`<li>${versionLine(v)}${v.at ? ` · ${v.at.replace('T', ' ').slice(0, 19)}` : ''}: <em>${v.text}</em></li>`)}
    </ul>`;
  }

  /** What the field shows now: the text a person sees is the one saved, whatever input event
   * is still on its way to `draft`. */
  private fieldText(): string {
    const field = this.renderRoot.querySelector<VscodeTextarea>('vscode-textarea');
    return field ? (field.wrappedElement?.value ?? field.value) : this.draft;
  }

  private save(expectedVersion: number, typed: string = this.fieldText()): void {
    this.draft = typed;
    const text = typed.trim();
    if (text) {
      // One edit id per text and version; kept with the draft, so a save sent again (after a
      // dropped link, or from a reloaded view) is the same edit and the host applies it once.
      this.baseVersion = expectedVersion;
      this.editId ??= crypto.randomUUID();
      this.keepDraft();
      this.fire('empo2-tip-save', { tipId: this.tip.id, text, expectedVersion, editId: this.editId });
    }
  }

  private openEpisode(runId: string, episodeId: string): void {
    this.fire('empo2-open-episode', { runId, episodeId });
  }

  private fire<K extends keyof TipCardEvents>(type: K, detail: TipCardEvents[K]['detail']): void {
    this.dispatchEvent(new CustomEvent(type, { detail, bubbles: true, composed: true }));
  }
}

declare global {
  interface HTMLElementTagNameMap {
    'empo2-tip-card': TipCard;
  }
  interface HTMLElementEventMap extends TipCardEvents {}
}
