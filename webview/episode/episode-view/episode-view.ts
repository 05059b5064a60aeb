import { LitElement, html, nothing, type PropertyValues, type TemplateResult } from 'lit';
import { customElement, property } from 'lit/decorators.js';
import { fixed, formatReturn, SCORE, SCORE_SCALE } from '../../../src/common/quantities';
import type { Episode, RolloutMode, TrajectoryStep, UpdateMode } from '../../../src/rpc/protocol';
import { shownTips } from '../shownTips';
import { episodeViewStyles } from './episode-view.styles';

export type RevealTipEvent = CustomEvent<{ readonly tipId: string }>;

// Keyed by the schema's modes, so a mode added there is a compile error here until it has a label.
const ROLLOUT: Record<RolloutMode, string> = { memory: 'rollout with memory', 'memory-free': 'rollout memory-free' };
const UPDATE: Record<UpdateMode, string> = {
  'on-policy': 'on-policy update',
  'on-policy-with-tips': 'on-policy update with tips',
  'off-policy': 'off-policy update (tips removed)',
};

function number(value: number | undefined): string {
  if (value === undefined || !Number.isFinite(value)) {
    return '–';
  }
  return fixed(value, Math.abs(value) >= 10 ? 1 : 2);
}

/**
 * One episode, read-only: the task, the facts (rollout and update mode, return, success), the tip
 * it wrote, then every step with its observation, the tips in its prompt, the action and its
 * rewards. Tip ids are links to the Memory Tips view.
 *
 * @fires empo2-reveal-tip - a tip link was clicked
 */
@customElement('empo2-episode-view')
export class EpisodeView extends LitElement {
  static override styles = episodeViewStyles;

  @property({ attribute: false }) episode!: Episode;
  @property({ attribute: false }) runId = '';
  @property({ attribute: false }) focusStep: number | undefined;
  /** Its iteration is still training: the episode as it ended, before its novelty rewards and tip. */
  @property({ attribute: false }) provisional = false;

  protected override updated(changed: PropertyValues<this>): void {
    if (changed.has('focusStep') || changed.has('episode')) {
      const target =
        this.focusStep !== undefined ? this.renderRoot.querySelector(`#step-${this.focusStep}`) : undefined;
      if (target) {
        target.scrollIntoView({ block: 'start' });
      } else if (changed.has('episode')) {
        window.scrollTo(0, 0);
      }
    }
  }

  override render(): TemplateResult {
    const e = this.episode;
    return html`
      <h1>Episode ${e.id}</h1>
      ${
        this.provisional
          ? html`<p class="provisional" role="status" data-testid="provisional">
            Iteration ${e.iteration} is still training: this is the episode as it ended. Its novelty rewards and the tip it writes
            come when the iteration is written, and this view shows them then.
          </p>`
          : nothing
      }
      <p class="task" data-testid="task">${e.description || e.task}</p>
      <div class="facts">
        <span class="fact">${this.runId} · iteration ${e.iteration}</span>
        <span class="fact">${e.task}/${e.variation}${e.group !== undefined ? ` · group ${e.group}` : ''}</span>
        <span class="fact">${ROLLOUT[e.rollout_mode] ?? e.rollout_mode}</span>
        <span class="fact">${UPDATE[e.update_mode] ?? e.update_mode}</span>
        <span class="fact ${e.success ? 'success' : 'failure'}" title="Final ${SCORE}, ${SCORE_SCALE}">${e.success ? 'succeeded' : 'failed'} · ${SCORE} ${formatReturn(e.return)}</span>
        ${e.intrinsic !== undefined ? html`<span class="fact">intrinsic ${number(e.intrinsic)}</span>` : nothing}
        <span class="fact">${e.steps.length} steps</span>
      </div>
      <h2>Tip written after this episode</h2>
      ${
        e.tip
          ? html`<div class="written-tip" data-testid="written-tip">${e.tip} ${e.tip_id ? this.tipLink(e.tip_id) : nothing}</div>`
          : html`<p class="label">${this.provisional ? 'No tip yet: a run that writes tips writes them once every episode of the iteration has ended.' : 'This episode wrote no tip.'}</p>`
      }
      <h2>Steps</h2>
      ${e.steps.map((step) => this.renderStep(step))}
    `;
  }

  private renderStep(step: TrajectoryStep): TemplateResult {
    const executed = step.executed_action && step.executed_action !== step.action;
    return html`
      <section class="step ${step.t === this.focusStep ? 'focused' : ''}" id="step-${step.t}" aria-label="Step ${step.t}">
        <h3>
          <span>Step ${step.t}</span>
          <span class="reward ${step.reward > 0 ? 'positive' : ''}">
            reward ${number(step.reward)} · intrinsic ${this.provisional ? 'pending' : number(step.intrinsic)}${step.score !== undefined ? ` · ${SCORE} ${formatReturn(step.score)}` : ''}
          </span>
        </h3>
        <div class="label">Observation</div>
        <p class="observation">${step.observation}</p>
        ${
          step.tips.length
            ? html`<div class="label" title="The prompt shows each tip followed by the action its episode took in the state most like this one">
                Tips in the prompt (${step.tips.length})
              </div>
              <ul class="tips">
                ${shownTips(step).map(
                  (tip) => html`<li title=${`In the prompt: ${tip.inPrompt}`}>
                    <span data-testid="tip-text">${tip.text}</span> ${tip.id ? this.tipLink(tip.id) : nothing}
                    ${
                      tip.action
                        ? html`<div class="tip-action" data-testid="tip-action">
                          + the action its episode took in the most similar state: <code>${tip.action}</code>
                        </div>`
                        : nothing
                    }
                  </li>`,
                )}
              </ul>`
            : nothing
        }
        <div class="label">Action</div>
        <div>
          <code class="action" data-testid="action">${step.action || '(empty)'}</code>
          ${executed ? html` → executed as <code class="action">${step.executed_action}</code>` : nothing}
        </div>
        <details>
          <summary>Prompt as the policy saw it${step.tips.length ? ' (with tips)' : ''}</summary>
          <pre>${step.prompt}</pre>
          ${step.tips.length ? html`<summary>Without tips (what the off-policy update trains on)</summary><pre>${step.prompt_no_tips}</pre>` : nothing}
        </details>
        ${step.next_observation ? html`<div class="label">Next observation</div><p class="observation">${step.next_observation}</p>` : nothing}
      </section>
    `;
  }

  private tipLink(tipId: string): TemplateResult {
    return html`<a
      class="tip-link"
      role="link"
      tabindex="0"
      title="Show this tip in the Memory Tips view"
      @click=${() => this.dispatchEvent(new CustomEvent('empo2-reveal-tip', { detail: { tipId }, bubbles: true, composed: true }) as RevealTipEvent)}
      >[${tipId}]</a
    >`;
  }
}

declare global {
  interface HTMLElementTagNameMap {
    'empo2-episode-view': EpisodeView;
  }
  interface HTMLElementEventMap {
    'empo2-reveal-tip': RevealTipEvent;
  }
}
