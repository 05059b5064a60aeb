import * as vscode from 'vscode';

/**
 * The "EMPO² Host" output channel: the extension's own notes about the host's life, and (once
 * the launcher exists) every line the host writes. A log channel, so users can pick the level.
 */
export class HostLog implements vscode.Disposable {
  static readonly channelName = 'EMPO² Host';
  private readonly channel = vscode.window.createOutputChannel(HostLog.channelName, { log: true });

  info(message: string): void {
    this.channel.info(message);
  }

  warn(message: string): void {
    this.channel.warn(message);
  }

  error(message: string): void {
    this.channel.error(message);
  }

  show(): void {
    this.channel.show(/* preserveFocus */ false);
  }

  dispose(): void {
    this.channel.dispose();
  }
}
