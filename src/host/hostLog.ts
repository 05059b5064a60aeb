import * as vscode from 'vscode';

/**
 * The "EMPO² Host" output channel: the extension's own notes about the host's life, and every
 * line the host writes to stderr (its log). A log channel, so users can pick the level.
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

  /** A line of the host's own log (stderr), at the level the line names. */
  hostLine(line: string): void {
    const text = `[host] ${line}`;
    if (/\b(ERROR|CRITICAL)\b|Traceback/.test(line)) {
      this.channel.error(text);
    } else if (/\bWARNING\b/.test(line)) {
      this.channel.warn(text);
    } else {
      this.channel.info(text);
    }
  }

  /** A line of a remote host's log (it arrives over the protocol, not on stderr). */
  remoteLine(text: string, level: string): void {
    if (level === 'ERROR' || level === 'CRITICAL') {
      this.channel.error(text);
    } else if (level === 'WARNING') {
      this.channel.warn(text);
    } else {
      this.channel.info(text);
    }
  }

  show(): void {
    this.channel.show(/* preserveFocus */ false);
  }

  dispose(): void {
    this.channel.dispose();
  }
}
