import type * as vscode from 'vscode';

/** The tokens of remote hosts, one per URL, in VS Code's SecretStorage (never in settings). */
export class RemoteTokens {
  constructor(private readonly secrets: vscode.SecretStorage) {}

  get(url: string): Thenable<string | undefined> {
    return this.secrets.get(secretKey(url));
  }

  async store(url: string, token: string): Promise<void> {
    await this.secrets.store(secretKey(url), token);
  }

  async forget(url: string): Promise<void> {
    await this.secrets.delete(secretKey(url));
  }
}

function secretKey(url: string): string {
  return `empo2.remoteToken:${url}`;
}
