import type { Value } from './expression';

// A retrieved tip in the debugger's Variables view: its value reads "<tip id>: <text>", and it
// carries a menu context so its context menu offers "Show Tip in Memory Tips" (ShowTipCommand).

/** VS Code's `debugProtocolVariableMenuContext` of a tip's variable. */
export const TIP_VARIABLE_CONTEXT = 'empo2.tip';

/** "t000004: open the shed …" for a tip object (id and text), else undefined. */
export function tipSummary(value: { readonly [key: string]: Value }): string | undefined {
  return typeof value.text === 'string' && 'id' in value ? `${value.id}: ${value.text.slice(0, 80)}` : undefined;
}

/** The tip id a tip variable's value starts with (tipSummary's form), or undefined. */
export function tipIdOfVariable(value: string): string | undefined {
  const match = /^([^\s:]+): /.exec(value);
  return match ? match[1] : undefined;
}
