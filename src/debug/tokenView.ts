// The token view of a turn: one line per token, its log-probability with tips and without them
// side by side, each coloured by how likely the token was, plus the importance ratio and the
// mask the off-policy update would apply (replayed training episodes). Editor decorations on a
// read-only virtual document: no webview, and the text can be copied.
// The table is tokenTable.ts; this draws it. Once open, it follows the debugger from turn to turn.

import * as vscode from 'vscode';
import type { DebugTurn } from '../rpc/debugProtocol';
import { TOKENS_SCHEME, tokenTable, type TokenCell } from './tokenTable';
import { Disposable } from '../common/lifecycle';

const COLOURS = [
  'rgba(70, 180, 90, 0.35)',
  'rgba(160, 190, 60, 0.35)',
  'rgba(230, 160, 40, 0.4)',
  'rgba(220, 60, 60, 0.45)',
];

export class TokenView extends Disposable implements vscode.TextDocumentContentProvider {
  private readonly texts = new Map<string, { text: string; cells: TokenCell[] }>();
  private readonly changed = this._register(new vscode.EventEmitter<vscode.Uri>());
  readonly onDidChange = this.changed.event;
  private readonly decorations = COLOURS.map((backgroundColor) =>
    this._register(vscode.window.createTextEditorDecorationType({ backgroundColor })),
  );

  constructor() {
    super();
    this._register(vscode.workspace.registerTextDocumentContentProvider(TOKENS_SCHEME, this));
  }

  provideTextDocumentContent(uri: vscode.Uri): string {
    return this.texts.get(uri.path)?.text ?? '';
  }

  /** The debugger stopped on `turn`: a token view in sight shows it instead, where it is. */
  async follow(turn: DebugTurn): Promise<vscode.TextEditor | undefined> {
    const open = vscode.window.visibleTextEditors.find((editor) => editor.document.uri.scheme === TOKENS_SCHEME);
    return open ? this.show(turn, open.viewColumn) : undefined;
  }

  async show(turn: DebugTurn, viewColumn: vscode.ViewColumn = vscode.ViewColumn.Beside): Promise<vscode.TextEditor> {
    const uri = vscode.Uri.from({ scheme: TOKENS_SCHEME, path: `/turn-${turn.index}.tokens` });
    const table = tokenTable(turn);
    this.texts.set(uri.path, table);
    this.changed.fire(uri);
    const editor = await vscode.window.showTextDocument(uri, { preview: true, viewColumn, preserveFocus: true });
    this.decorations.forEach((decoration, bucket) =>
      editor.setDecorations(
        decoration,
        table.cells.filter((c) => c.bucket === bucket).map((c) => new vscode.Range(c.line, c.start, c.line, c.end)),
      ),
    );
    return editor;
  }
}
