import type * as vscode from 'vscode';

/**
 * Just enough of vscode.Uri for code that only calls `with`, `path` and `toString` on URIs it is
 * given (the HTML shell). Unit tests run in plain Node, where the vscode module does not exist.
 */
export class FakeUri {
  constructor(
    readonly scheme: string,
    readonly authority: string,
    readonly path: string,
  ) {}

  static file(path: string): vscode.Uri {
    return new FakeUri('file', '', path) as unknown as vscode.Uri;
  }

  with(change: { scheme?: string; authority?: string; path?: string }): vscode.Uri {
    return new FakeUri(
      change.scheme ?? this.scheme,
      change.authority ?? this.authority,
      change.path ?? this.path,
    ) as unknown as vscode.Uri;
  }

  toString(): string {
    return `${this.scheme}://${this.authority}${this.path}`;
  }
}
