import type { DebugProtocol } from '@vscode/debugprotocol';
import { show, type Value } from './expression';
import { TIP_VARIABLE_CONTEXT, tipSummary } from './tipVariables';

/**
 * The values behind the Variables view's references: a scope or an object gets a handle, its
 * children are listed on request. Handles last until the next stop (the adapter clears them when
 * it announces one), as DAP allows.
 */
export class VariableValues {
  private readonly values = new Map<number, Value>();
  private next = 1000;

  clear(): void {
    this.values.clear();
  }

  handle(value: Value): number {
    const id = this.next++;
    this.values.set(id, value);
    return id;
  }

  children(reference: number): DebugProtocol.Variable[] {
    const value = this.values.get(reference);
    if (value === undefined || value === null || typeof value !== 'object') {
      return [];
    }
    const entries: Array<[string, Value]> = Array.isArray(value)
      ? value.map((v, i) => [String(i), v])
      : Object.entries(value);
    return entries.map(([name, child]) => this.variable(name, child));
  }

  private variable(name: string, value: Value): DebugProtocol.Variable {
    if (value === null || typeof value !== 'object') {
      return { name, value: show(value), variablesReference: 0 };
    }
    const size = Array.isArray(value) ? value.length : Object.keys(value).length;
    const tip = Array.isArray(value) ? undefined : tipSummary(value);
    const summary = Array.isArray(value)
      ? listSummary(size)
      : (tip ?? `{${Object.keys(value).slice(0, 4).join(', ')}${size > 4 ? ', …' : ''}}`);
    const variable: DebugProtocol.Variable & { __vscodeVariableMenuContext?: string } = {
      name,
      value: summary,
      variablesReference: size ? this.handle(value) : 0,
      indexedVariables: Array.isArray(value) ? size : undefined,
    };
    if (tip) {
      // VS Code's context key for the variable's menu: "Show Tip in Memory Tips" (ShowTipCommand).
      variable.__vscodeVariableMenuContext = TIP_VARIABLE_CONTEXT;
    }
    return variable;
  }
}

/** A list's value in the Variables view: "[]" when empty, else its length in words ("[2 items]");
 * "[0]" read as a list holding a zero. */
export function listSummary(size: number): string {
  return size === 0 ? '[]' : `[${size} ${size === 1 ? 'item' : 'items'}]`;
}
