// "Show Tip History" opens a read-only virtual document (no unsaved Untitled editor with a dirty
// dot): its text is held here, served under the scheme below, and replaced when the same tip's
// history is shown again.

import * as vscode from 'vscode';
import { Disposable } from '../common/lifecycle';

export const TIP_HISTORY_SCHEME = 'empo2-tip-history';

export class TipHistoryDocuments extends Disposable implements vscode.TextDocumentContentProvider {
  private readonly texts = new Map<string, string>();
  private readonly changed = this._register(new vscode.EventEmitter<vscode.Uri>());
  readonly onDidChange = this.changed.event;

  constructor() {
    super();
    this._register(vscode.workspace.registerTextDocumentContentProvider(TIP_HISTORY_SCHEME, this));
  }

  provideTextDocumentContent(uri: vscode.Uri): string {
    return this.texts.get(uri.path) ?? '';
  }

  /** Shows `text` as the history of `tipId` in `runId` (Markdown, read-only). */
  async show(runId: string, tipId: string, text: string): Promise<vscode.TextDocument> {
    const uri = vscode.Uri.from({ scheme: TIP_HISTORY_SCHEME, path: `/${runId}/${tipId} history.md` });
    this.texts.set(uri.path, text);
    this.changed.fire(uri);
    const document = await vscode.languages.setTextDocumentLanguage(
      await vscode.workspace.openTextDocument(uri),
      'markdown',
    );
    await vscode.window.showTextDocument(document, { preview: true });
    return document;
  }
}
