import * as vscode from 'vscode';
import * as path from 'node:path';
import { Emitter } from '../common/event';
import { Disposable, type IDisposable } from '../common/lifecycle';
import type { Settings } from '../common/settings';
import { RpcClient, type RequestOptions } from '../rpc/client';
import { describeError } from '../rpc/errors';
import { Notifications, Requests, type NotificationType, type RequestType } from '../rpc/methods';
import { PROTOCOL_VERSION, type InitializeResult } from '../rpc/protocol';
import { connectWebSocket } from '../rpc/wsTransport';
import { Backoff } from './backoff';
import { HostLog } from './hostLog';
import { HostProcess, HostStartError } from './hostProcess';
import { runHostSetup } from './hostSetup';
import { HostStateModel } from './hostState';
import { chooseInterpreter, checkHostInstalled, hostSources, type Interpreter } from './interpreter';
import { pythonExtensionInterpreter } from './pythonExtension';

// The one training host this window talks to: spawned here (`empo2-host serve`) or remote
// (Connect to Remote Host). It owns the process and the connection, reconnects with backoff
// when the socket drops, reports a crash with the tail of the host's stderr and a Restart
// action, and re-wires every notification listener to each new connection, so views subscribe
// once (on()) and survive restarts.

/** A connected, initialized host. */
export interface HostSession {
  readonly client: RpcClient;
  readonly init: InitializeResult;
  readonly url: string;
  readonly remote: boolean;
}

export class HostNotRunningError extends Error {
  constructor(what: string) {
    super(`${what} needs a running training host; start it first (EMPO²: Start Host).`);
    this.name = 'HostNotRunningError';
  }
}

const RESTART = 'Restart Host';
const SHOW_LOG = 'Show Host Log';
const CREATE_ENV = 'Create Environment and Install';
const OPEN_SETTINGS = 'Open Settings';
const CONNECT_REMOTE = 'Connect to Remote Host';

export interface HostManagerOptions {
  readonly extensionVersion: string;
  /** The folder that holds host/ and scripts/ (the extension's own folder). */
  readonly projectRoot: string;
  /** Where run folders go when no workspace folder is open. */
  readonly fallbackRunRoot: string;
  readonly secrets: vscode.SecretStorage;
  /** Remembers extra run roots (folders opened outside the configured root) per workspace. */
  readonly workspaceState: vscode.Memento;
}

const EXTRA_ROOTS_KEY = 'empo2.extraRunRoots';

interface Target {
  readonly url: string;
  readonly token: string;
  readonly remote: boolean;
}

export class HostManager extends Disposable {
  private process: HostProcess | undefined;
  private session: HostSession | undefined;
  private target: Target | undefined;
  private stopping = false;
  private reconnectTimer: ReturnType<typeof setTimeout> | undefined;
  private readonly backoff = new Backoff();
  private readonly notificationEmitters = new Map<string, Emitter<unknown>>();
  private startPromise: Promise<boolean> | undefined;

  private readonly _onDidConnect = this._register(new Emitter<HostSession>());
  /** A (re)connected host: views reload what they show. */
  readonly onDidConnect = this._onDidConnect.event;
  private readonly _onDidDisconnect = this._register(new Emitter<void>());
  readonly onDidDisconnect = this._onDidDisconnect.event;

  constructor(
    readonly state: HostStateModel,
    private readonly log: HostLog,
    private readonly settings: Settings,
    private readonly options: HostManagerOptions,
  ) {
    super();
    for (const type of Object.values(Notifications)) {
      this.notificationEmitters.set(type.method, this._register(new Emitter<unknown>()));
    }
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
  request<Params, Result>(type: RequestType<Params, Result>, params: Params, options?: RequestOptions): Promise<Result> {
    if (!this.session) {
      return Promise.reject(new HostNotRunningError(`'${type.method}'`));
    }
    return this.session.client.request(type, params, options);
  }

  /** The run roots the spawned host gets: the configured one (absolute), then any added ones. */
  runRoots(): string[] {
    const configured = this.settings.runRoot?.fsPath ?? this.options.fallbackRunRoot;
    const extra = this.options.workspaceState.get<string[]>(EXTRA_ROOTS_KEY, []);
    return [...new Set([configured, ...extra])];
  }

  /** Lets the next local host read runs in `folder` too (Open Run Folder outside the run root). */
  async addRunRoot(folder: string): Promise<void> {
    const extra = this.options.workspaceState.get<string[]>(EXTRA_ROOTS_KEY, []);
    if (!extra.includes(folder)) {
      await this.options.workspaceState.update(EXTRA_ROOTS_KEY, [...extra, folder]);
    }
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
    const interpreter = await this.findInterpreter();
    if (!interpreter) {
      return false;
    }
    this.state.set('starting');
    return vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: 'EMPO²: starting the training host', cancellable: true },
      async (progress, token) => {
        progress.report({ message: `${interpreter.python} -m empo2.cli serve` });
        const cwd = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath ?? path.dirname(this.runRoots()[0]);
        const args = [...this.runRoots().flatMap((root) => ['--run-root', root]), ...this.settings.hostArgs];
        this.log.info(`Starting the host: ${interpreter.python} -m empo2.cli serve ${args.join(' ')} (in ${cwd}; interpreter from ${interpreter.source})`);
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
          this.state.set('crashed');
          void this.reportFailure(`the training host did not start: ${describeError(error)}`, tail);
          return false;
        } finally {
          cancelled.dispose();
        }
      },
    );
  }

  /** The interpreter to use, after offering to install the host where it is missing. */
  private async findInterpreter(): Promise<Interpreter | undefined> {
    const resource = vscode.workspace.workspaceFolders?.[0]?.uri;
    let fromPython = await pythonExtensionInterpreter(resource);
    if (fromPython && !this.settings.pythonPath && (await checkHostInstalled(fromPython)).kind !== 'ok') {
      // The Python extension's interpreter lacks the host; the project's .venv may have it.
      this.log.info(`The Python extension's interpreter (${fromPython}) has no EMPO² host; trying the project's .venv.`);
      fromPython = undefined;
    }
    const interpreter = chooseInterpreter({
      settingPath: this.settings.pythonPath,
      pythonExtensionPath: fromPython,
      projectRoot: this.options.projectRoot,
    });
    const check = await checkHostInstalled(interpreter.python);
    if (check.kind === 'ok') {
      return interpreter;
    }
    this.log.warn(`Cannot start the host: ${check.detail}.`);
    if (interpreter.source === 'setting' && check.kind === 'no-interpreter') {
      const choice = await vscode.window.showErrorMessage(
        `EMPO²: the Python interpreter in the setting empo2.pythonPath cannot run (${check.detail}). ` +
          'Point the setting at a Python 3.10+ interpreter, or clear it to use the project\'s own virtual environment.',
        OPEN_SETTINGS,
      );
      if (choice === OPEN_SETTINGS) {
        await vscode.commands.executeCommand('workbench.action.openSettings', 'empo2.pythonPath');
      }
      return undefined;
    }
    return this.offerSetup(interpreter, check.detail);
  }

  /** Offers to create .venv next to host/ and install the host into it, as the Python tools do. */
  private async offerSetup(interpreter: Interpreter, detail: string): Promise<Interpreter | undefined> {
    const sources = hostSources(this.options.projectRoot);
    if (!sources) {
      await vscode.window.showErrorMessage(
        `EMPO²: ${detail}, and this copy of the extension does not ship the host's sources. ` +
          'Install it with `pip install -e host` from the EMPO² Studio repository, then set empo2.pythonPath.',
        OPEN_SETTINGS,
      );
      return undefined;
    }
    const venv = path.join(this.options.projectRoot, '.venv');
    const choice = await vscode.window.showWarningMessage(
      `EMPO²: the training host is not installed (${detail}). Create a virtual environment in ${venv} ` +
        'and install the host with its pinned dependencies into it? This downloads PyTorch and takes a few minutes.',
      CREATE_ENV,
      OPEN_SETTINGS,
    );
    if (choice === OPEN_SETTINGS) {
      await vscode.commands.executeCommand('workbench.action.openSettings', 'empo2.pythonPath');
      return undefined;
    }
    if (choice !== CREATE_ENV) {
      return undefined;
    }
    const installed = await runHostSetup(sources.setupScript, this.log);
    if (!installed) {
      return undefined;
    }
    const venvInterpreter = chooseInterpreter({ settingPath: '', pythonExtensionPath: undefined, projectRoot: this.options.projectRoot });
    const check = await checkHostInstalled(venvInterpreter.python);
    if (check.kind !== 'ok') {
      await vscode.window.showErrorMessage(`EMPO²: the host still cannot run after the install (${check.detail}). See the host log.`, SHOW_LOG).then(
        (c) => c === SHOW_LOG && this.log.show(),
      );
      return undefined;
    }
    if (interpreter.source !== 'project-venv') {
      this.log.info(`Using ${venvInterpreter.python}; the interpreter chosen before (${interpreter.python}) has no host.`);
    }
    return venvInterpreter;
  }

  /** Connects to a host running elsewhere (an SSH tunnel, Remote-SSH); the token is kept secret. */
  async connectRemote(url: string, token: string): Promise<boolean> {
    await this.stop({ quiet: true });
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
      this.state.set('stopped');
      this.log.error(`Cannot connect to ${url}: ${describeError(error)}`);
      throw error;
    }
  }

  private async connect(target: Target): Promise<void> {
    const transport = await connectWebSocket(target.url, target.token);
    const client = new RpcClient(transport, { defaultTimeoutMs: 30_000 });
    for (const [method, emitter] of this.notificationEmitters) {
      client.on({ method, paramsSchema: '' }, (params) => emitter.fire(params));
    }
    const init = await client.request(Requests.initialize, {
      protocolVersion: PROTOCOL_VERSION,
      clientInfo: { name: 'EMPO² Studio', version: this.options.extensionVersion },
      // A spawned host's log already reaches us on its stderr; a remote one's only this way.
      capabilities: { logMessages: target.remote, progress: true },
    });
    const session: HostSession = { client, init, url: target.url, remote: target.remote };
    client.onDidClose((info) => this.connectionClosed(session, info.code, info.reason));
    this.session = session;
    this.backoff.reset();
    this.state.set('running');
    this._onDidConnect.fire(session);
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
    this.log.warn(`The connection to the host closed (${code}${reason ? `: ${reason}` : ''}).`);
    if (this.process?.hasExited) {
      return; // processExited reports it.
    }
    this.scheduleReconnect();
  }

  private scheduleReconnect(): void {
    const target = this.target;
    const delay = this.backoff.next();
    if (!target || delay === undefined) {
      this.log.error('Gave up reconnecting to the host.');
      this.target = undefined;
      this.state.set(target?.remote ? 'stopped' : 'crashed');
      void this.reportFailure('the connection to the training host was lost and could not be restored', this.process?.stderrTail() ?? '');
      return;
    }
    this.state.set('reconnecting');
    this.log.info(`Reconnecting in ${delay} ms (attempt ${this.backoff.attempts}).`);
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = undefined;
      if (this.target !== target || this.stopping) {
        return;
      }
      this.connect(target).catch((error) => {
        this.log.warn(`Reconnect failed: ${describeError(error)}`);
        if (!this.process?.hasExited) {
          this.scheduleReconnect();
        }
      });
    }, delay);
  }

  private processExited(host: HostProcess, code: number | null, signal: NodeJS.Signals | null): void {
    if (this.process !== host) {
      return;
    }
    this.process = undefined;
    this.target = undefined;
    clearTimeout(this.reconnectTimer);
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
      void this.reportFailure(`the training host ${how}`, host.stderrTail());
    }
  }

  private async reportFailure(what: string, stderrTail: string): Promise<void> {
    const lastLines = stderrTail.trim().split('\n').filter(Boolean).slice(-3).join(' ⏎ ');
    const message = `EMPO²: ${what}.${lastLines ? ` Last lines of its log: ${lastLines}` : ''}`;
    const actions = this.target?.remote ? [CONNECT_REMOTE, SHOW_LOG] : [RESTART, SHOW_LOG];
    const choice = await vscode.window.showErrorMessage(message, ...actions);
    if (choice === RESTART) {
      await vscode.commands.executeCommand('empo2.restartHost');
    } else if (choice === CONNECT_REMOTE) {
      await vscode.commands.executeCommand('empo2.connectRemote');
    } else if (choice === SHOW_LOG) {
      this.log.show();
    }
  }

  // -- stopping -----------------------------------------------------------------------------------

  /**
   * Stops the spawned host gracefully (a `shutdown` request: the live run stops at its next
   * iteration boundary), killing it if it takes too long; for a remote host only disconnects.
   */
  async stop(options: { quiet?: boolean; graceMs?: number } = {}): Promise<void> {
    const host = this.process;
    if (!host && !this.session && !this.target) {
      return;
    }
    this.stopping = true;
    this.state.set('stopping');
    clearTimeout(this.reconnectTimer);
    try {
      if (host && this.session && !this.session.remote) {
        await this.session.client.request(Requests.shutdown, {}, { timeoutMs: options.graceMs ?? 40_000 }).catch((error) => {
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
      this.state.set('stopped');
    }
  }

  /** For deactivate(): no waiting for an iteration boundary; SIGTERM, then SIGKILL after 3 s. */
  async stopForExit(): Promise<void> {
    this.stopping = true;
    clearTimeout(this.reconnectTimer);
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
    clearTimeout(this.reconnectTimer);
    this.session?.client.dispose();
    this.session = undefined;
    this.process?.dispose();
    this.process = undefined;
    super.dispose();
  }

  /** Token of a remote host URL, from SecretStorage. */
  async remoteToken(url: string): Promise<string | undefined> {
    return this.options.secrets.get(secretKey(url));
  }

  async storeRemoteToken(url: string, token: string): Promise<void> {
    await this.options.secrets.store(secretKey(url), token);
  }

  async forgetRemoteToken(url: string): Promise<void> {
    await this.options.secrets.delete(secretKey(url));
  }
}

function secretKey(url: string): string {
  return `empo2.remoteToken:${url}`;
}
