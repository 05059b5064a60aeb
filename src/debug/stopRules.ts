// When the debugger stops after a played turn: a line breakpoint on the turn (its condition
// true; a logpoint prints instead), else an exception filter ("Invalid action corrected",
// "Episode failed", a replay's first different action). Pure: the adapter sends what it returns.

import { StoppedEvent } from '@vscode/debugadapter';
import type { DebugProtocol } from '@vscode/debugprotocol';
import type { DebugTurn } from '../rpc/debugProtocol';
import { describeError } from '../rpc/errors';
import { Expression, show, truthy, type Value } from './expression';
import { turnScope } from './turnScope';

/** The debugger's one thread: the episode. */
export const THREAD = 1;

/** Where a message goes: the debug console, or its error stream. */
type Output = (text: string, category?: 'console' | 'stderr') => void;

export const EXCEPTION_FILTERS: DebugProtocol.ExceptionBreakpointsFilter[] = [
  {
    filter: 'corrected',
    label: 'Invalid action corrected',
    description: 'Stop after a turn whose action the environment corrected to a valid one.',
    default: false,
  },
  {
    filter: 'failed',
    label: 'Episode failed',
    description: 'Stop when the episode ends without success.',
    default: true,
  },
  {
    filter: 'differs',
    label: 'Replay: policy would act differently',
    description: 'Stop at each replayed turn where greedy decoding would not produce the recorded action.',
    default: false,
  },
];

/** A breakpoint on a turn's line of the episode document. */
export interface LineBreakpoint {
  readonly turn: number;
  readonly condition?: Expression;
  readonly logMessage?: string;
  readonly id: number;
}

/** A breakpoint or exception filter that stops on this just-played turn (logpoints print). */
export function stopReason(
  turn: DebugTurn,
  breakpoints: readonly LineBreakpoint[],
  filters: ReadonlySet<string>,
  output: Output,
): StoppedEvent | undefined {
  const scope = turnScope(turn);
  const hit: number[] = [];
  for (const bp of breakpoints.filter((b) => b.turn === turn.index)) {
    let matches = true;
    if (bp.condition) {
      try {
        matches = truthy(bp.condition.evaluate(scope));
      } catch (err) {
        output(`breakpoint on turn ${turn.index}: ${describeError(err)}\n`, 'stderr');
        matches = true; // a condition that cannot be evaluated stops, as VS Code's own do
      }
    }
    if (!matches) {
      continue;
    }
    if (bp.logMessage !== undefined) {
      output(`${interpolate(bp.logMessage, scope)}\n`);
      continue;
    }
    hit.push(bp.id);
  }
  if (hit.length) {
    const event = new StoppedEvent('breakpoint', THREAD) as DebugProtocol.StoppedEvent;
    event.body.hitBreakpointIds = hit;
    return event;
  }
  const exception = (text: string) => {
    const event = new StoppedEvent('exception', THREAD, text) as DebugProtocol.StoppedEvent;
    event.body.description = text;
    return event;
  };
  if (filters.has('corrected') && turn.corrected) {
    return exception(`invalid action corrected: "${turn.action}" → "${turn.executedAction}"`);
  }
  if (filters.has('differs') && turn.replay?.differs) {
    return exception(
      `the policy would act differently at turn ${turn.index} (prefers ${JSON.stringify(turn.replay.preferredToken)})`,
    );
  }
  if (filters.has('failed') && turn.done && !turn.success) {
    return exception(`episode failed (score ${turn.score ?? 0})`);
  }
  return undefined;
}

/** A logpoint's message with `{expression}` parts evaluated over the turn. */
export function interpolate(template: string, scope: Record<string, Value>): string {
  return template.replace(/\{([^{}]+)\}/g, (_, source: string) => {
    try {
      return show(new Expression(source).evaluate(scope));
    } catch (err) {
      return `<${describeError(err)}>`;
    }
  });
}
