import { Emitter } from '../common/event';
import { Disposable } from '../common/lifecycle';
import { describeError } from '../rpc/errors';
import type { ConnectionHealthModel } from './connectionHealth';
import { ReconnectSchedule } from './reconnectSchedule';

// Dials a host again after its connection dropped, following ReconnectSchedule, and keeps the
// connection health model current (reconnecting with the next try's time, then lost). Free of
// vscode: HostManager gives it the dial function, connectionNotices.ts shows what it reports.

export interface ReconnectTarget {
  readonly url: string;
  readonly remote: boolean;
}

export interface ReconnectorLog {
  info(message: string): void;
  warn(message: string): void;
}

export class Reconnector extends Disposable {
  private target: ReconnectTarget | undefined;
  private dial: (() => Promise<void>) | undefined;
  private schedule: ReconnectSchedule | undefined;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private since = 0;
  private reason = '';
  private lastLogged = '';
  private announcedLost = false;
  private generation = 0;

  private readonly _onDidLose = this._register(new Emitter<ReconnectTarget>());
  /** The fast retries are spent (once per outage): time to offer the user a way out. */
  readonly onDidLose = this._onDidLose.event;
  private readonly _onDidRecover = this._register(
    new Emitter<{ target: ReconnectTarget; downMs: number; attempts: number }>(),
  );
  readonly onDidRecover = this._onDidRecover.event;

  constructor(
    private readonly health: ConnectionHealthModel,
    private readonly log: ReconnectorLog,
    private readonly makeSchedule: (target: ReconnectTarget) => ReconnectSchedule,
    private readonly now: () => number = Date.now,
  ) {
    super();
  }

  get active(): boolean {
    return this.target !== undefined;
  }

  /** The link to `target` dropped (`reason` in words); dial it with `dial` until it answers. */
  begin(target: ReconnectTarget, reason: string, dial: () => Promise<void>): void {
    this.cancel();
    this.target = target;
    this.dial = dial;
    this.schedule = this.makeSchedule(target);
    this.since = this.now();
    this.reason = reason;
    this.lastLogged = '';
    this.announcedLost = false;
    this.log.warn(`Lost the connection to ${describeTarget(target)} (${reason}); reconnecting.`);
    this.planNext();
  }

  /** Dial now, with a fresh fast phase (the Reconnect action); false when nothing is to be dialled. */
  retryNow(): boolean {
    if (!this.target || !this.schedule) {
      return false;
    }
    clearTimeout(this.timer);
    this.schedule.reset();
    this.schedule.next(this.now()); // restarts the fast phase's clock
    this.announcedLost = false;
    this.log.info(`Reconnecting to ${describeTarget(this.target)} now.`);
    this.attempt();
    return true;
  }

  /** Stops dialling (the host was stopped, or another one chosen). */
  cancel(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.target = undefined;
    this.dial = undefined;
    this.generation++;
  }

  private planNext(): void {
    const target = this.target!;
    const schedule = this.schedule!;
    const now = this.now();
    const next = schedule.next(now);
    const lost = next === undefined || next.phase === 'slow';
    this.health.set({
      kind: lost ? 'lost' : 'reconnecting',
      since: this.since,
      remote: target.remote,
      url: target.url,
      attempts: schedule.attempts,
      ...(next ? { nextTryAt: now + next.delayMs } : {}),
      reason: this.reason,
    });
    if (lost && !this.announcedLost) {
      this.announcedLost = true;
      this.log.warn(
        next
          ? `Still no connection to ${describeTarget(target)} after ${seconds(now - this.since)}; trying again every ${seconds(next.delayMs)} in the background.`
          : `Gave up reconnecting to ${describeTarget(target)} after ${seconds(now - this.since)} (${this.reason}).`,
      );
      this._onDidLose.fire(target);
    }
    if (next) {
      this.timer = setTimeout(() => this.attempt(), next.delayMs);
    }
  }

  private attempt(): void {
    const target = this.target;
    const dial = this.dial;
    if (!target || !dial) {
      return;
    }
    const generation = this.generation;
    const health = this.health.health;
    if (health.kind === 'reconnecting' || health.kind === 'lost') {
      this.health.set({ ...health, nextTryAt: undefined }); // "trying now"
    }
    dial().then(
      () => {
        if (generation !== this.generation) {
          return;
        }
        const downMs = this.now() - this.since;
        const attempts = this.schedule?.attempts ?? 0;
        this.log.info(
          `Reconnected to ${describeTarget(target)} after ${seconds(downMs)} (${attempts} attempt${attempts === 1 ? '' : 's'}).`,
        );
        this.target = undefined;
        this.dial = undefined;
        this._onDidRecover.fire({ target, downMs, attempts });
      },
      (error: unknown) => {
        if (generation !== this.generation) {
          return;
        }
        this.reason = describeError(error);
        if (this.reason !== this.lastLogged) {
          this.lastLogged = this.reason; // one line per new reason, not one a second
          this.log.info(`Reconnect attempt failed: ${this.reason}`);
        }
        this.planNext();
      },
    );
  }

  override dispose(): void {
    this.cancel();
    super.dispose();
  }
}

export function describeTarget(target: ReconnectTarget): string {
  return target.remote ? `the remote host at ${target.url}` : 'the training host';
}

function seconds(ms: number): string {
  return ms < 10_000 ? `${(ms / 1000).toFixed(1)} s` : `${Math.round(ms / 1000)} s`;
}
