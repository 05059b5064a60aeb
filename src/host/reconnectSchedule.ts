// When to dial a host again after the link dropped, as a pure schedule (unit-tested).
//
// Fast phase: delays double from `firstDelayMs` but never exceed `maxFastDelayMs` (1 s), so a
// link that comes back (a tunnel restarted, a port reopened) is used within about a second; it
// lasts `fastBudgetMs`. After it the connection counts as lost: a remote host keeps training
// on its own, so slow background attempts follow every `slowDelayMs` for `slowLimitMs` (the
// setting empo2.remote.backgroundRetryMinutes; 0 turns them off); a spawned host gets none
// (the user is offered Restart Host instead).

export interface ReconnectScheduleOptions {
  readonly firstDelayMs?: number;
  readonly maxFastDelayMs?: number;
  readonly fastBudgetMs?: number;
  readonly slowDelayMs?: number;
  /** How long slow attempts go on after the fast phase (0: none). */
  readonly slowLimitMs?: number;
  /** 0..1: each delay is scaled by a random factor in [1 - jitter, 1], so windows do not dial in lockstep. */
  readonly jitter?: number;
  readonly random?: () => number;
}

export type ReconnectPhase = 'fast' | 'slow';

export interface NextAttempt {
  readonly delayMs: number;
  readonly phase: ReconnectPhase;
}

export const RECONNECT_DEFAULTS = {
  firstDelayMs: 150,
  maxFastDelayMs: 1_000,
  fastBudgetMs: 30_000,
  slowDelayMs: 15_000,
} as const;

export class ReconnectSchedule {
  private attempt = 0;
  private startedAt: number | undefined;
  private readonly o: Required<Omit<ReconnectScheduleOptions, 'random'>> & { random: () => number };

  constructor(options: ReconnectScheduleOptions = {}) {
    this.o = {
      ...RECONNECT_DEFAULTS,
      slowLimitMs: 0,
      jitter: 0.2,
      random: Math.random,
      ...options,
    };
  }

  get attempts(): number {
    return this.attempt;
  }

  /** When the link dropped (the first next() call), or undefined before. */
  get since(): number | undefined {
    return this.startedAt;
  }

  /** The phase at `now`: fast while within the budget, slow after it. */
  phase(now: number): ReconnectPhase {
    return this.startedAt === undefined || now - this.startedAt < this.o.fastBudgetMs ? 'fast' : 'slow';
  }

  /** The next attempt's delay, or undefined when no more attempts are due. */
  next(now: number): NextAttempt | undefined {
    this.startedAt ??= now;
    const elapsed = now - this.startedAt;
    if (elapsed < this.o.fastBudgetMs) {
      const base = Math.min(this.o.maxFastDelayMs, this.o.firstDelayMs * 2 ** this.attempt);
      this.attempt += 1;
      return { delayMs: this.jittered(base), phase: 'fast' };
    }
    if (elapsed + this.o.slowDelayMs > this.o.fastBudgetMs + this.o.slowLimitMs) {
      return undefined;
    }
    this.attempt += 1;
    return { delayMs: this.jittered(this.o.slowDelayMs), phase: 'slow' };
  }

  reset(): void {
    this.attempt = 0;
    this.startedAt = undefined;
  }

  private jittered(ms: number): number {
    return Math.round(ms * (1 - this.o.jitter * this.o.random()));
  }
}
