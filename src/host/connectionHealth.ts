import { Emitter } from '../common/event';
import { Disposable } from '../common/lifecycle';

// How the link to the training host is doing, one model for every view (status bar, metrics
// panel, trajectory tree, tips view, notifications). The host manager writes it; views only read
// it. It says nothing about the run (paused, interrupted, finished: that is the run model's):
// only whether what a view shows is live.
//
//   none          no host is meant to be connected (never started, or stopped on purpose)
//   connected     a live, initialized connection whose keepalive answers
//   reconnecting  the link dropped (or went silent) and the extension is dialling again; the
//                 host may well be up and training; views keep what they show, greyed
//   lost          the fast retries are spent; for a remote host slow retries go on in the
//                 background (nextTryAt), and the user is offered Reconnect

export type ConnectionHealth =
  | { readonly kind: 'none' }
  | { readonly kind: 'connected'; readonly since: number; readonly remote: boolean; readonly url: string }
  | {
      readonly kind: 'reconnecting' | 'lost';
      /** When the connection was lost (ms since the epoch). */
      readonly since: number;
      readonly remote: boolean;
      readonly url: string;
      /** Attempts made since the connection was lost. */
      readonly attempts: number;
      /** When the next attempt is due; undefined while one is under way, or when none will come. */
      readonly nextTryAt?: number;
      /** Why the link went down, or why the last attempt failed, in words for a person. */
      readonly reason?: string;
    };

export type HealthKind = ConnectionHealth['kind'];

export class ConnectionHealthModel extends Disposable {
  private _health: ConnectionHealth = { kind: 'none' };
  private readonly _onDidChange = this._register(new Emitter<ConnectionHealth>());
  readonly onDidChange = this._onDidChange.event;

  get health(): ConnectionHealth {
    return this._health;
  }

  /** True while what views show is live: connected. */
  get isLive(): boolean {
    return this._health.kind === 'connected';
  }

  /** True while a host is meant to be there but is not reachable (reconnecting or lost). */
  get isInterrupted(): boolean {
    return this._health.kind === 'reconnecting' || this._health.kind === 'lost';
  }

  set(health: ConnectionHealth): void {
    this._health = health;
    this._onDidChange.fire(health);
  }
}

/** Seconds, rounded up, for "next try in 3 s" (never "in 0 s" for a try still ahead). */
function secondsUntil(at: number, now: number): number {
  return Math.max(1, Math.ceil((at - now) / 1000));
}

function duration(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) {
    return `${s} s`;
  }
  const m = Math.floor(s / 60);
  return m < 60 ? `${m} min ${s % 60} s` : `${Math.floor(m / 60)} h ${m % 60} min`;
}

/** One line for a person: "reconnecting… (12 s, next try in 1 s)", "connection lost 2 min ago". */
export function describeHealth(health: ConnectionHealth, now: number = Date.now()): string {
  switch (health.kind) {
    case 'none':
      return 'no host connected';
    case 'connected':
      return `connected to ${health.remote ? 'the remote host' : 'the host'}`;
    case 'reconnecting': {
      const next =
        health.nextTryAt === undefined ? 'trying now' : `next try in ${secondsUntil(health.nextTryAt, now)} s`;
      return `reconnecting… (${duration(now - health.since)}, ${next})`;
    }
    case 'lost': {
      const next = health.nextTryAt === undefined ? '' : `; next try in ${duration(health.nextTryAt - now)}`;
      return `connection lost ${duration(now - health.since)} ago${next}`;
    }
  }
}

/** The few words a webview shows next to greyed content ("reconnecting…", "connection lost"). */
export function healthBadge(kind: HealthKind): string | undefined {
  return kind === 'reconnecting' ? 'reconnecting…' : kind === 'lost' ? 'connection lost' : undefined;
}

/** A request could not reach the host: no connection, and none coming (stopped, or lost). */
export class HostUnreachableError extends Error {
  constructor(readonly health: ConnectionHealth) {
    super(health.kind === 'lost' ? 'the connection to the training host is lost' : 'no training host is connected');
    this.name = 'HostUnreachableError';
  }
}

/**
 * Resolves once the host is connected (at once when it is); rejects with HostUnreachableError
 * when it will not be: the connection is given up (lost) or the host is stopped.
 */
export function whenConnected(model: ConnectionHealthModel): Promise<void> {
  const now = model.health;
  if (now.kind === 'connected') {
    return Promise.resolve();
  }
  if (now.kind !== 'reconnecting') {
    return Promise.reject(new HostUnreachableError(now));
  }
  return new Promise((resolve, reject) => {
    const subscription = model.onDidChange((health) => {
      if (health.kind === 'connected') {
        subscription.dispose();
        resolve();
      } else if (health.kind !== 'reconnecting') {
        subscription.dispose();
        reject(new HostUnreachableError(health));
      }
    });
  });
}
