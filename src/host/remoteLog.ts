import type { LogEntry, LogTailResult } from '../rpc/protocol';

// A remote host's log in the Host Log channel. A spawned host's log arrives on its stderr; a
// remote one's only over the protocol: live training lines as `log/message`, and everything else
// (the server's own lines, what was logged while the link was down) from `log.tail`, asked
// after each (re)connect for the lines after the last one shown. Lines are numbered by the
// host (`n`), so a line that comes both ways is written once; a new host `instance` (the host
// restarted) starts the count again.

export type LogLineSink = (entry: LogEntry) => void;

export class RemoteLogFollower {
  private instance: string | undefined;
  private lastShown = 0;

  constructor(private readonly write: LogLineSink) {}

  /** After a (re)connect: fills in every line since the last one shown. */
  async catchUp(tail: (after: number) => Promise<LogTailResult>): Promise<number> {
    let written = 0;
    for (let page = 0; page < 20; page++) {
      const result = await tail(this.lastShown);
      if (result.instance !== this.instance) {
        const restarted = this.instance !== undefined;
        this.instance = result.instance;
        if (restarted && this.lastShown > 0) {
          this.lastShown = 0; // another host process: its numbers start at 1
          continue;
        }
      }
      for (const entry of result.entries) {
        written += this.accept(entry) ? 1 : 0;
      }
      const last = result.entries.at(-1)?.n ?? result.newest;
      if (!result.entries.length || last >= result.newest) {
        break;
      }
    }
    return written;
  }

  /** A live `log/message` line; false when it was shown already. */
  accept(entry: LogEntry): boolean {
    if (entry.n !== undefined) {
      if (entry.n <= this.lastShown) {
        return false;
      }
      this.lastShown = entry.n;
    }
    this.write(entry);
    return true;
  }
}

/** "[host] INFO empo2.trainer: iteration 3 done", as the host's stderr would show it. */
export function formatLogEntry(entry: LogEntry): string {
  const time = new Date(entry.time * 1000).toISOString().slice(11, 19);
  return `[host ${time}] ${entry.level} ${entry.logger}: ${entry.message}`;
}
