import * as vscode from 'vscode';
import type { Empo2Api } from '../../src/extension';

// The extension under test, for the tiers that run inside a real VS Code (integration).

/** `publisher.name` from package.json. */
export const EXTENSION_ID = 'empo2.empo2-studio';

/** What activate() returned: the live services the integration tests look into. */
export function api(): Empo2Api {
  return vscode.extensions.getExtension<Empo2Api>(EXTENSION_ID)!.exports;
}
