// Notices a link that went silent: a frozen tunnel or a dropped NAT mapping closes nothing, so
// without this the extension would show a "live" run for as long as the operating system keeps
// the dead socket open (minutes). Every `intervalMs` it sends a probe (a WebSocket ping, which
// the host answers from its event loop, not behind queued requests); any sign of life (a pong,
// any message) counts. Silent for `timeoutMs` → `onSilent` once (the caller drops the socket).
// Detection takes at most timeoutMs + intervalMs.

export interface KeepaliveOptions {
  readonly intervalMs: number;
  readonly timeoutMs: number;
  readonly now?: () => number;
}

export const KEEPALIVE_DEFAULTS: KeepaliveOptions = { intervalMs: 1_000, timeoutMs: 4_000 };

export class Keepalive {
  private lastAlive: number;
  private timer: ReturnType<typeof setInterval> | undefined;
  private reported = false;
  private readonly now: () => number;

  constructor(
    private readonly probe: () => void,
    private readonly onSilent: (silentMs: number) => void,
    private readonly options: KeepaliveOptions = KEEPALIVE_DEFAULTS,
  ) {
    this.now = options.now ?? Date.now;
    this.lastAlive = this.now();
  }

  start(): void {
    this.lastAlive = this.now();
    this.reported = false;
    this.timer ??= setInterval(() => this.tick(), this.options.intervalMs);
    (this.timer as { unref?: () => void }).unref?.();
  }

  /** A pong, a message: the link is alive. */
  alive(): void {
    this.lastAlive = this.now();
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  /** One check (the timer calls it; tests too). */
  tick(): void {
    if (this.reported) {
      return; // a link is declared dead once
    }
    const silent = this.now() - this.lastAlive;
    if (silent >= this.options.timeoutMs) {
      this.reported = true;
      this.stop();
      this.onSilent(silent);
      return;
    }
    try {
      this.probe();
    } catch {
      // A socket that cannot even send is dead; the next tick reports it if nothing arrives.
    }
  }
}
