import type { DebugTurn } from '../rpc/debugProtocol';
import { Expression, show, type Value } from './expression';
import type { VariableValues } from './variableValues';

/** What the Debug Console and a watch show: an expression's value in the frame's scope
 *  (expression.ts); an object or a list opens in the Variables tree (`values`). */
export function evaluateInScope(
  text: string,
  scope: Readonly<Record<string, Value>>,
  values: VariableValues,
): { result: string; variablesReference: number } {
  const value = new Expression(text).evaluate(scope);
  const isObject = value !== null && typeof value === 'object';
  return {
    result: isObject ? JSON.stringify(value).slice(0, 2000) : show(value),
    variablesReference: isObject ? values.handle(value) : 0,
  };
}

/** What the Debug Console says of a turn played with a forced action (`> action`). */
export function forcedTurnText(turn: DebugTurn): string {
  return `turn ${turn.index}: ${turn.executedAction} → reward ${turn.reward ?? 0}, score ${turn.score ?? 0}: ${turn.nextObservation ?? ''}`;
}
