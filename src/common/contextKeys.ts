import * as vscode from 'vscode';

/** A function that sets the context keys `keys()` returns, each only when its value changed. */
export function contextKeys(keys: () => Record<string, string | boolean>): () => void {
  const now = new Map<string, string | boolean>();
  return () => {
    for (const [key, value] of Object.entries(keys())) {
      if (now.get(key) !== value) {
        now.set(key, value);
        void vscode.commands.executeCommand('setContext', key, value);
      }
    }
  };
}
