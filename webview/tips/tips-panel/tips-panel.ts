import { LitElement, html, type TemplateResult } from 'lit';
import { customElement, property } from 'lit/decorators.js';
import '@vscode-elements/elements/dist/vscode-button/index.js';
import type { HostState } from '../../../src/host/hostState';
import type { TipsPanelCommand } from '../../../src/views/tips/tipsMessages';
import { tipsPanelStyles } from './tips-panel.styles';

export type RunCommandEvent = CustomEvent<{ readonly command: TipsPanelCommand }>;

/**
 * The Memory Tips panel. Today it shows its empty states; tips per task variation (score,
 * provenance, version, author, inline edit) arrive with the memory.* protocol.
 *
 * @fires empo2-run-command - a button asks the extension to run one of its commands
 */
@customElement('empo2-tips-panel')
export class TipsPanel extends LitElement {
  static override styles = tipsPanelStyles;

  @property({ attribute: 'host-state' })
  hostState: HostState = 'stopped';

  override render(): TemplateResult {
    const hostUp = this.hostState === 'running';
    return html`
      <section class="empty" aria-label="Memory tips">
        <p>${hostUp ? 'No tips yet in this run.' : 'Memory tips appear here once a run is open.'}</p>
        <p class="muted">
          Tips are short lessons the policy writes for itself after each episode and reads back in
          later prompts. Here you can read them, edit them, add your own and see every version.
        </p>
        <div class="actions">
          ${hostUp
            ? html`<vscode-button @click=${() => this.runCommand('empo2.addTip')}>Add Tip</vscode-button>`
            : html`<vscode-button @click=${() => this.runCommand('empo2.startHost')}>Start Host</vscode-button>`}
          <vscode-button secondary @click=${() => this.runCommand('empo2.openRunFolder')}>
            Open Run Folder
          </vscode-button>
        </div>
      </section>
    `;
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
  }
}
