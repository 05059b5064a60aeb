import type { TrajectoryStep } from '../../src/rpc/protocol';

// The tips of one step as the episode view lists them (pure, unit-tested in plain Node). The
// prompt shows a tip as its text followed by the action of its entry most like this state, so
// one tip id reads differently from step to step; the view shows the two parts apart, so the id
// and the text beside it always agree.

export interface ShownTip {
  readonly id: string | undefined;
  /** The tip's own text: what its id names. The whole prompt text for runs that lack the parts. */
  readonly text: string;
  /** The action of the tip's entry most like this state; '' when none or not recorded. */
  readonly action: string;
  /** Exactly what the prompt showed. */
  readonly inPrompt: string;
}

export function shownTips(step: Pick<TrajectoryStep, 'tips' | 'tip_ids' | 'tip_texts' | 'tip_actions'>): ShownTip[] {
  const split = step.tip_texts?.length === step.tips.length && step.tip_actions?.length === step.tips.length;
  return step.tips.map((inPrompt, i) => ({
    id: step.tip_ids[i],
    text: split ? step.tip_texts![i] : inPrompt,
    action: split ? step.tip_actions![i] : '',
    inPrompt,
  }));
}
