import * as vscode from 'vscode';
import * as path from 'node:path';
import { Emitter } from '../common/event';
import { Disposable, type IDisposable } from '../common/lifecycle';
import type { Settings } from '../common/settings';
import type { RequestOptions } from '../rpc/client';
import { describeError } from '../rpc/errors';
import { Notifications, Requests, type NotificationType, type RequestType } from '../rpc/methods';
import { ConnectionHealthModel } from './connectionHealth';
import type { HostLog } from './hostLog';
import { HostNotRunningError, requestAction } from './hostNotRunning';
import { HostProcess, HostStartError } from './hostProcess';
import { connectFailure, openHostSession, type HostSession, type HostTarget } from './hostSession';
import type { HostStateModel } from './hostState';
import { findHostInterpreter } from './interpreterDialogs';
import { ReconnectSchedule } from './reconnectSchedule';
import { Reconnector } from './reconnector';
import { formatLogEntry, RemoteLogFollower } from './remoteLog';
import { RemoteTokens } from './remoteTokens';
import { RunRoots } from './runRoots';

// The one training host this window talks to: spawned here (`empo2-host serve`) or remote
// (Connect to Remote Host). It owns the process and the connection, keeps the connection health
// model current, redials when the link drops (reconnector.ts), announces a crash with the tail of
// the host's stderr (onDidFail; connectionNotices.ts offers Restart), and re-wires every
// notification listener to each new connection, so views subscribe once (on()) and survive
// restarts.

/** A host this window spawned that died or did not start (connectionNotices.ts tells the person). */
export interface HostFailure {
  readonly what: string;
  /** The last lines of its stderr. */
  readonly stderrTail: string;
  readonly remote: boolean;
}

export interface HostManagerOptions {
  readonly extensionVersion: string;
  /** The folder that holds host/ and scripts/ (the extension's own folder). */
  readonly projectRoot: string;
  readonly secrets: vscode.SecretStorage;
  /** The folders a spawned host may read runs from. */
  readonly runRoots: RunRoots;
}

export class HostManager extends Disposable {
  private process: HostProcess | undefined;
  private session: HostSession | undefined;
  private target: HostTarget | undefined;
  private stopping = false;
  /** Every view reads whether what it shows is live from here. */
  readonly health = this._register(new ConnectionHealthModel());
  readonly reconnector: Reconnector;
  private readonly remoteLog: RemoteLogFollower;
  private readonly notificationEmitters = new Map<string, Emitter<unknown>>();
  private startPromise: Promise<boolean> | undefined;
  /** The folders a spawned host may read runs from. */
  readonly runRoots: RunRoots;
  /** Remote hosts' tokens, in SecretStorage. */
  readonly remoteTokens: RemoteTokens;

  private readonly _onDidConnect = this._register(new Emitter<HostSession>());
  /** A (re)connected host: views reload what they show. */
  readonly onDidConnect = this._onDidConnect.event;
  private readonly _onDidDisconnect = this._register(new Emitter<void>());
  readonly onDidDisconnect = this._onDidDisconnect.event;
  private readonly _onDidFail = this._register(new Emitter<HostFailure>());
  readonly onDidFail = this._onDidFail.event;

  constructor(
    readonly state: HostStateModel,
    private readonly log: HostLog,
    private readonly settings: Settings,
    private readonly options: HostManagerOptions,
  ) {
    super();
    this.runRoots = options.runRoots;
    this.remoteTokens = new RemoteTokens(options.secrets);
    for (const type of Object.values(Notifications)) {
      this.notificationEmitters.set(type.method, this._register(new Emitter<unknown>()));
    }
    this.reconnector = this._register(
      new Reconnector(
        this.health,
        log,
        (target) =>
          new ReconnectSchedule({ slowLimitMs: target.remote ? this.settings.backgroundRetryMinutes * 60_000 : 0 }),
      ),
    );
    // A remote host's log: live training lines, and the rest from log.tail after each connect.
    this.remoteLog = new RemoteLogFollower((entry) => log.remoteLine(formatLogEntry(entry), entry.level));
    this._register(
      this.on(Notifications.logMessage, ({ entries }) => {
        if (this.session?.remote) {
          entries.forEach((entry) => this.remoteLog.accept(entry));
        }
      }),
    );
  }

  get current(): HostSession | undefined {
    return this.session;
  }

  get isRemote(): boolean {
    return this.target?.remote ?? false;
  }

  /** Listens to a notification from whichever host is connected, now and after reconnects. */
  on<Params>(type: NotificationType<Params>, listener: (params: Params) => void): IDisposable {
    return this.notificationEmitters.get(type.method)!.event(listener as (value: unknown) => void);
  }

  /** A request to the connected host; HostNotRunningError when there is none. */
  request<Params, Result>(
    type: RequestType<Params, Result>,
    params: Params,
    options?: RequestOptions,
  ): Promise<Result> {
    if (!this.session) {
      return Promise.reject(new HostNotRunningError(requestAction(type.method), this.health.isInterrupted));
    }
    return this.session.client.request(type, params, options);
  }

  // -- starting ---------------------------------------------------------------------------------

  /** Starts a local host (with progress); true once connected. Concurrent calls share one start. */
  start(): Promise<boolean> {
    if (this.session && !this.session.remote) {
      return Promise.resolve(true);
    }
    this.startPromise ??= this.startLocal().finally(() => (this.startPromise = undefined));
    return this.startPromise;
  }

  private async startLocal(): Promise<boolean> {
    await this.disconnect();
    const interpreter = await findHostInterpreter(this.settings, this.options.projectRoot, this.log);
    if (!interpreter) {
      return false;
    }
    this.state.set('starting');
    return vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: 'EMPO²: starting the training host', cancellable: true },
      async (progress, token) => {
        progress.report({ message: `${interpreter.python} -m empo2.cli serve` });
        const cwd = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath ?? path.dirname(this.runRoots.list()[0]);
        const args = [...this.runRoots.list().flatMap((root) => ['--run-root', root]), ...this.settings.hostArgs];
        this.log.info(
          `Starting the host: ${interpreter.python} -m empo2.cli serve ${args.join(' ')} (in ${cwd}; interpreter from ${interpreter.source})`,
        );
        const host = new HostProcess({ python: interpreter.python, args, cwd });
        this.process = host;
        host.onStderrLine((line) => this.log.hostLine(line));
        host.onExit((exit) => this.processExited(host, exit.code, exit.signal));
        const cancelled = token.onCancellationRequested(() => void host.stop(2_000));
        try {
          const ready = await host.ready;
          progress.report({ message: `listening on port ${ready.port}; connecting` });
          this.target = { url: `ws://127.0.0.1:${ready.port}`, token: host.token, remote: false };
          await this.connect(this.target);
          this.log.info(`Host ready (pid ${ready.pid}, port ${ready.port}, protocol ${ready.protocolVersion}).`);
          return true;
        } catch (error) {
          if (token.isCancellationRequested) {
            this.log.info('Host start cancelled.');
            this.state.set('stopped');
            return false;
          }
          const tail = error instanceof HostStartError ? error.stderrTail : host.stderrTail();
          this.log.error(`The host did not start: ${describeError(error)}${tail ? `\n${tail}` : ''}`);
          this.stopping = true; // its exit is expected now: not a crash on top of this report
          await host.stop(2_000);
          this.stopping = false;
          this.process = undefined;
          this.health.set({ kind: 'none' });
          this.state.set('crashed');
          this.reportFailure(`the training host did not start: ${describeError(error)}`, tail);
          return false;
        } finally {
          cancelled.dispose();
        }
      },
    );
  }

  /**
   * Connects to a host running elsewhere (an SSH tunnel, Remote-SSH); the token is kept secret.
   * The host in use is stopped first (`now`: without waiting for its run's iteration boundary).
   */
  async connectRemote(url: string, token: string, options: { now?: boolean } = {}): Promise<boolean> {
    await this.stop({ quiet: true, now: options.now });
    this.state.set('starting');
    try {
      this.target = { url, token, remote: true };
      await vscode.window.withProgress(
        { location: vscode.ProgressLocation.Notification, title: `EMPO²: connecting to ${url}` },
        () => this.connect(this.target!),
      );
      this.log.info(`Connected to the remote host at ${url}.`);
      return true;
    } catch (error) {
      this.target = undefined;
      this.health.set({ kind: 'none' });
      this.state.set('stopped');
      this.log.error(`${connectFailure(url, error)}.`);
      throw error;
    }
  }

  /** Dials a remote host and hangs up, leaving the host in use alone; throws when it cannot be reached or refuses the token. */
  async probeRemote(url: string, token: string): Promise<void> {
    const session = await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: `EMPO²: reaching ${url}` },
      () => openHostSession({ url, token, remote: true }, this.options.extensionVersion, [], () => undefined),
    );
    session.client.dispose();
  }

  private async connect(target: HostTarget, openTimeoutMs?: number): Promise<void> {
    const session = await openHostSession(
      target,
      this.options.extensionVersion,
      this.notificationEmitters.keys(),
      (method, params) => this.notificationEmitters.get(method)!.fire(params),
      { openTimeoutMs },
    );
    if (this.target !== target || this.stopping) {
      session.client.dispose(); // stopped, or another host chosen, while this one was dialled
      throw new Error('the connection was no longer wanted');
    }
    session.client.onDidClose((info) => this.connectionClosed(session, info.code, info.reason));
    this.session = session;
    this.health.set({ kind: 'connected', since: Date.now(), remote: target.remote, url: target.url });
    this.state.set('running');
    this._onDidConnect.fire(session);
    if (target.remote) {
      void this.remoteLog
        .catchUp((after) => session.client.request(Requests.logTail, { after }))
        .catch((error) => this.log.warn(`Cannot read the remote host's log: ${describeError(error)}`));
    }
  }

  /** Dials the host again now (the Reconnect action); false when there is nothing to reconnect to. */
  reconnect(): boolean {
    if (this.session) {
      return true;
    }
    return this.reconnector.retryNow();
  }

  // -- losing the connection or the process -----------------------------------------------------

  private connectionClosed(session: HostSession, code: number, reason: string): void {
    if (this.session !== session) {
      return;
    }
    this.session = undefined;
    this._onDidDisconnect.fire();
    if (this.stopping || this.isDisposed) {
      return;
    }
    if (this.process?.hasExited || !this.target) {
      return; // processExited reports it.
    }
    const target = this.target;
    this.state.set('reconnecting');
    // A reconnect attempt gives up on a silent link after 3 s, so one that is back is used soon.
    this.reconnector.begin(target, reason || `code ${code}`, () => this.connect(target, 3_000));
  }

  private processExited(host: HostProcess, code: number | null, signal: NodeJS.Signals | null): void {
    if (this.process !== host) {
      return;
    }
    this.process = undefined;
    this.target = undefined;
    this.reconnector.cancel();
    this.health.set({ kind: 'none' });
    const how = signal ? `was killed by ${signal}` : `exited with code ${code}`;
    if (this.stopping || this.isDisposed || (code === 0 && !this.session)) {
      this.log.info(`The host ${how}.`);
      if (!this.stopping && !this.isDisposed) {
        this.state.set('stopped');
      }
      return;
    }
    if (this.state.state === 'starting') {
      return; // startLocal reports a host that dies before it is ready.
    }
    this.log.error(`The host ${how} unexpectedly.`);
    this.session?.client.close('the host process exited');
    this.session = undefined;
    this.state.set(code === 0 ? 'stopped' : 'crashed');
    if (code !== 0) {
      this.reportFailure(`the training host ${how}`, host.stderrTail());
    }
  }

  private reportFailure(what: string, stderrTail: string): void {
    this._onDidFail.fire({ what, stderrTail, remote: this.target?.remote ?? false });
  }

  // -- stopping -----------------------------------------------------------------------------------

  /**
   * Stops the spawned host gracefully (a `shutdown` request: the live run ends `interrupted` at
   * its next iteration boundary, or at once with `now`, resumable either way), killing it if it
   * takes too long; for a remote host only disconnects.
   */
  async stop(options: { quiet?: boolean; graceMs?: number; now?: boolean } = {}): Promise<void> {
    const host = this.process;
    if (!host && !this.session && !this.target) {
      return;
    }
    this.stopping = true;
    this.state.set('stopping');
    this.reconnector.cancel();
    try {
      if (host && this.session && !this.session.remote) {
        await this.session.client
          .request(Requests.shutdown, options.now ? { now: true } : {}, { timeoutMs: options.graceMs ?? 40_000 })
          .catch((error) => {
            this.log.warn(`shutdown request: ${describeError(error)}`);
          });
      }
      await this.disconnect();
      if (host) {
        await host.stop(options.graceMs ?? 10_000);
        host.dispose();
      }
      if (!options.quiet) {
        this.log.info('The host is stopped.');
      }
    } finally {
      this.process = undefined;
      this.target = undefined;
      this.stopping = false;
      this.health.set({ kind: 'none' });
      this.state.set('stopped');
    }
  }

  /** For deactivate(): no waiting for an iteration boundary; SIGTERM, then SIGKILL after 3 s. */
  async stopForExit(): Promise<void> {
    this.stopping = true;
    this.reconnector.cancel();
    const host = this.process;
    await this.disconnect();
    if (host) {
      await host.stop(3_000);
      host.dispose();
    }
    this.process = undefined;
  }

  private async disconnect(): Promise<void> {
    const session = this.session;
    this.session = undefined;
    if (session) {
      session.client.dispose();
      this._onDidDisconnect.fire();
    }
  }

  override dispose(): void {
    this.stopping = true;
    this.reconnector.cancel();
    this.session?.client.dispose();
    this.session = undefined;
    this.process?.dispose();
    this.process = undefined;
    super.dispose();
  }
}
