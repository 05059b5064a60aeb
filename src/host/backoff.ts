// Delays between reconnection attempts: doubling from `initialMs` up to `maxMs`, with up to
// `jitter` of random spread so several windows do not dial a host in lockstep, and a budget of
// attempts after which the caller gives up. Pure, so unit tests can check the schedule.

export interface BackoffOptions {
  readonly initialMs?: number;
  readonly maxMs?: number;
  readonly maxAttempts?: number;
  /** 0..1: each delay is scaled by a random factor in [1 - jitter, 1]. */
  readonly jitter?: number;
  readonly random?: () => number;
}

export class Backoff {
  private attempt = 0;
  private readonly initialMs: number;
  private readonly maxMs: number;
  private readonly maxAttempts: number;
  private readonly jitter: number;
  private readonly random: () => number;

  constructor(options: BackoffOptions = {}) {
    this.initialMs = options.initialMs ?? 250;
    this.maxMs = options.maxMs ?? 8_000;
    this.maxAttempts = options.maxAttempts ?? 12;
    this.jitter = options.jitter ?? 0.2;
    this.random = options.random ?? Math.random;
  }

  get attempts(): number {
    return this.attempt;
  }

  /** The delay before the next attempt, or undefined when the budget is spent. */
  next(): number | undefined {
    if (this.attempt >= this.maxAttempts) {
      return undefined;
    }
    const base = Math.min(this.maxMs, this.initialMs * 2 ** this.attempt);
    this.attempt += 1;
    return Math.round(base * (1 - this.jitter * this.random()));
  }

  reset(): void {
    this.attempt = 0;
  }
}
