import * as assert from 'node:assert/strict';
import {
  ConnectionHealthModel,
  describeHealth,
  HostUnreachableError,
  whenConnected,
} from '../../src/host/connectionHealth';
import { ReconnectSchedule } from '../../src/host/reconnectSchedule';
import { Reconnector } from '../../src/host/reconnector';
import { formatLogEntry, RemoteLogFollower } from '../../src/host/remoteLog';
import { ConnectionClosedError, RequestTimeoutError, RpcError } from '../../src/rpc/errors';
import { Keepalive } from '../../src/rpc/keepalive';
import { MAX_SAVE_ATTEMPTS, saveAcrossReconnects } from '../../src/tips/retriedSave';

const URL = 'ws://127.0.0.1:8765';

describe('reconnect schedule', () => {
  it('never waits more than a second while the fast budget lasts, so a link that comes back is used at once', () => {
    const schedule = new ReconnectSchedule({ jitter: 0, fastBudgetMs: 30_000 });
    const delays: number[] = [];
    let now = 0;
    for (let next = schedule.next(now); next && next.phase === 'fast'; next = schedule.next(now)) {
      delays.push(next.delayMs);
      now += next.delayMs;
    }
    assert.deepEqual(delays.slice(0, 5), [150, 300, 600, 1_000, 1_000]);
    assert.ok(Math.max(...delays) <= 1_000);
    assert.ok(now >= 30_000 && now < 31_000, `the fast phase lasted ${now} ms`);
  });

  it('goes on slowly in the background up to its limit, then stops; none at all without a limit', () => {
    const slow = new ReconnectSchedule({ jitter: 0, fastBudgetMs: 1_000, slowDelayMs: 10_000, slowLimitMs: 35_000 });
    let now = 0;
    let next = slow.next(now);
    while (next?.phase === 'fast') {
      now += next.delayMs;
      next = slow.next(now);
    }
    const slowDelays: number[] = [];
    while (next) {
      assert.equal(next.phase, 'slow');
      slowDelays.push(next.delayMs);
      now += next.delayMs;
      next = slow.next(now);
    }
    assert.deepEqual(slowDelays, [10_000, 10_000, 10_000]);
    assert.equal(slow.phase(now), 'slow');

    const spawned = new ReconnectSchedule({ jitter: 0, fastBudgetMs: 1_000 });
    assert.ok(spawned.next(0));
    assert.equal(spawned.next(1_000), undefined);
    spawned.reset();
    assert.equal(spawned.next(5_000)?.delayMs, 150, 'reset starts a new fast phase');
  });

  it('spreads delays with jitter, never above the schedule', () => {
    const schedule = new ReconnectSchedule({ jitter: 0.5, random: () => 1 });
    assert.equal(schedule.next(0)?.delayMs, 75);
  });
});

describe('keepalive', () => {
  it('probes while the link answers and reports a silent one once, after the timeout', () => {
    let now = 0;
    let probes = 0;
    const silent: number[] = [];
    const keepalive = new Keepalive(
      () => probes++,
      (ms) => silent.push(ms),
      { intervalMs: 1_000, timeoutMs: 4_000, now: () => now },
    );
    for (let t = 1; t <= 10; t++) {
      now = t * 1_000;
      keepalive.alive(); // a pong every second
      keepalive.tick();
    }
    assert.equal(probes, 10);
    assert.deepEqual(silent, []);
    for (let t = 11; t <= 16; t++) {
      now = t * 1_000; // frozen: nothing arrives
      keepalive.tick();
    }
    assert.deepEqual(silent, [4_000], 'a frozen link is reported once, 4 s after the last sign of life');
  });
});

describe('connection health', () => {
  it('says how long the link has been down and when the next try is, in words', () => {
    const since = 1_000_000;
    assert.equal(
      describeHealth(
        { kind: 'reconnecting', since, remote: true, url: URL, attempts: 3, nextTryAt: since + 12_400 },
        since + 12_000,
      ),
      'reconnecting… (12 s, next try in 1 s)',
    );
    assert.equal(
      describeHealth(
        { kind: 'lost', since, remote: true, url: URL, attempts: 40, nextTryAt: since + 200_000 },
        since + 125_000,
      ),
      'connection lost 2 min 5 s ago; next try in 1 min 15 s',
    );
    assert.equal(describeHealth({ kind: 'connected', since, remote: true, url: URL }), 'connected to the remote host');
  });

  it('lets a save wait for the next connection, and fails it in words when the link is given up', async () => {
    const model = new ConnectionHealthModel();
    await assert.rejects(whenConnected(model), HostUnreachableError);
    model.set({ kind: 'reconnecting', since: 0, remote: true, url: URL, attempts: 1 });
    const waiting = whenConnected(model);
    model.set({ kind: 'connected', since: 1, remote: true, url: URL });
    await waiting;
    model.set({ kind: 'reconnecting', since: 2, remote: true, url: URL, attempts: 1 });
    const given = whenConnected(model);
    model.set({ kind: 'lost', since: 2, remote: true, url: URL, attempts: 30 });
    await assert.rejects(given, /connection to the training host is lost/);
  });
});

describe('a save across reconnects', () => {
  it('sends the same request again after the link dropped, once connected again, and returns what the host answered', async () => {
    const model = new ConnectionHealthModel();
    model.set({ kind: 'connected', since: 0, remote: true, url: URL });
    const attempts: string[] = [];
    const save = saveAcrossReconnects(async () => {
      attempts.push(model.health.kind);
      if (attempts.length === 1) {
        model.set({ kind: 'reconnecting', since: 1, remote: true, url: URL, attempts: 0 });
        throw new ConnectionClosedError('memory.update', 'code 1006');
      }
      if (attempts.length === 2) {
        throw new RequestTimeoutError('memory.update', 30_000);
      }
      return { tip: 'v2', replayed: true };
    }, model);
    setTimeout(() => model.set({ kind: 'connected', since: 2, remote: true, url: URL }), 20);
    assert.deepEqual(await save, { tip: 'v2', replayed: true });
    assert.deepEqual(attempts, ['connected', 'connected', 'connected']);
  });

  it('ends at an answer: a conflict is not retried, and neither is an endless run of drops', async () => {
    const model = new ConnectionHealthModel();
    model.set({ kind: 'connected', since: 0, remote: false, url: URL });
    let calls = 0;
    await assert.rejects(
      saveAcrossReconnects(async () => {
        calls++;
        throw new RpcError('memory.update', -32022, 'tip t1 is at version 3, not 2');
      }, model),
      RpcError,
    );
    assert.equal(calls, 1);
    calls = 0;
    await assert.rejects(
      saveAcrossReconnects(async () => {
        calls++;
        throw new ConnectionClosedError('memory.update', 'code 1006');
      }, model),
      ConnectionClosedError,
    );
    assert.equal(calls, MAX_SAVE_ATTEMPTS);
  });
});

describe('reconnector', () => {
  const target = { url: URL, remote: true };
  const quiet = { info: () => undefined, warn: () => undefined };

  it('dials until the link is back, reporting reconnecting with the next try, then logs the recovery', async () => {
    const health = new ConnectionHealthModel();
    const lines: string[] = [];
    const log = { info: (m: string) => lines.push(m), warn: (m: string) => lines.push(m) };
    const reconnector = new Reconnector(
      health,
      log,
      () => new ReconnectSchedule({ firstDelayMs: 5, maxFastDelayMs: 10, fastBudgetMs: 5_000, jitter: 0 }),
    );
    const kinds: string[] = [];
    health.onDidChange((h) => kinds.push(h.kind === 'reconnecting' && h.nextTryAt === undefined ? 'trying' : h.kind));
    let dials = 0;
    const recovered = new Promise<{ attempts: number }>((resolve) => reconnector.onDidRecover(resolve));
    reconnector.begin(target, 'code 1006', async () => {
      dials++;
      if (dials < 3) {
        throw new Error('connect ECONNREFUSED 127.0.0.1:8765');
      }
      health.set({ kind: 'connected', since: Date.now(), remote: true, url: URL });
    });
    assert.equal((await recovered).attempts, 3);
    assert.deepEqual(kinds, [
      'reconnecting',
      'trying',
      'reconnecting',
      'trying',
      'reconnecting',
      'trying',
      'connected',
    ]);
    assert.equal(
      lines.filter((l) => l.startsWith('Reconnect attempt failed')).length,
      1,
      'the same reason is logged once',
    );
    assert.match(
      lines.at(-1)!,
      /^Reconnected to the remote host at ws:\/\/127\.0\.0\.1:8765 after \d+\.\d s \(3 attempts\)\.$/,
    );
    assert.equal(reconnector.active, false);
  });

  it('says lost once the fast retries are spent, keeps trying a remote host slowly, and Reconnect starts over', async () => {
    const health = new ConnectionHealthModel();
    const reconnector = new Reconnector(
      health,
      quiet,
      () =>
        new ReconnectSchedule({
          firstDelayMs: 5,
          maxFastDelayMs: 5,
          fastBudgetMs: 30,
          slowDelayMs: 20,
          slowLimitMs: 10_000,
          jitter: 0,
        }),
    );
    const lost = new Promise<void>((resolve) => reconnector.onDidLose(() => resolve()));
    let dials = 0;
    reconnector.begin(target, 'code 1006', async () => {
      dials++;
      throw new Error('connect ECONNREFUSED');
    });
    await lost;
    const h = health.health;
    assert.equal(h.kind, 'lost');
    assert.ok(h.kind === 'lost' && h.nextTryAt !== undefined, 'slow retries go on for a remote host');
    const before = dials;
    await new Promise((resolve) => setTimeout(resolve, 60));
    assert.ok(dials > before, 'a background attempt was made');
    assert.equal(reconnector.retryNow(), true);
    assert.equal(health.health.kind, 'lost', 'stays lost until an attempt succeeds');
    reconnector.cancel();
    assert.equal(reconnector.retryNow(), false);
  });
});

describe('remote host log', () => {
  const entry = (n: number, message = `line ${n}`) => ({
    time: 1_800_000_000 + n,
    level: 'INFO' as const,
    logger: 'empo2.server',
    message,
    n,
  });

  it('fills in what was missed, writes a line that came both ways once, and starts over for a restarted host', async () => {
    const written: number[] = [];
    const follower = new RemoteLogFollower((e) => written.push(e.n!));
    const host = { instance: 'a', lines: [entry(1), entry(2), entry(3)] };
    const tail = async (after: number) => {
      const entries = host.lines.filter((e) => e.n > after).slice(0, 2);
      return { instance: host.instance, entries, dropped: 0, newest: host.lines.at(-1)!.n };
    };
    assert.equal(await follower.catchUp(tail), 3, 'pages until the newest line');
    assert.equal(follower.accept(entry(3)), false);
    assert.equal(follower.accept(entry(4)), true);
    host.lines.push(entry(4), entry(5));
    await follower.catchUp(tail);
    assert.deepEqual(written, [1, 2, 3, 4, 5]);
    host.instance = 'b';
    host.lines = [entry(1, 'a new host'), entry(2)];
    await follower.catchUp(tail);
    assert.deepEqual(written, [1, 2, 3, 4, 5, 1, 2]);
    assert.match(
      formatLogEntry(entry(7, 'connection 3 closed')),
      /^\[host \d\d:\d\d:\d\d\] INFO empo2\.server: connection 3 closed$/,
    );
  });
});
