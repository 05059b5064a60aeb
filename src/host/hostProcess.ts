import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createInterface } from 'node:readline';
import { Emitter } from '../common/event';
import { Disposable } from '../common/lifecycle';

// One spawned `empo2-host serve` process (free of vscode). The contract with the host
// (host/empo2/server/main.py): a fresh random token in EMPO2_HOST_TOKEN (never on the command
// line, where `ps` shows it), exactly one JSON ready line on stdout once the socket is bound,
// logs on stderr, SIGTERM shuts down like a `shutdown` request. The host also exits when its
// stdin closes (EMPO2_HOST_EXIT_ON_STDIN_EOF), so if this extension host dies without
// deactivating, no training process is left behind.

export const TOKEN_ENV = 'EMPO2_HOST_TOKEN';

export interface ReadyLine {
  readonly event: 'ready';
  readonly port: number;
  readonly pid: number;
  readonly protocolVersion: string;
}

export interface HostSpawnOptions {
  readonly python: string;
  /** Arguments after `-m empo2.cli serve` (run roots, the user's extra arguments). */
  readonly args: readonly string[];
  readonly cwd: string;
  readonly env?: NodeJS.ProcessEnv;
  /** Give up waiting for the ready line after this many ms (loading torch takes a while). */
  readonly readyTimeoutMs?: number;
  /** Lines of stderr kept for crash reports. */
  readonly tailLines?: number;
}

export interface HostExit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
}

export class HostStartError extends Error {
  constructor(
    message: string,
    readonly stderrTail: string,
  ) {
    super(message);
    this.name = 'HostStartError';
  }
}

export function newToken(): string {
  return randomBytes(32).toString('hex');
}

export class HostProcess extends Disposable {
  readonly token = newToken();
  private readonly child: ChildProcess;
  private readonly tail: string[] = [];
  private exitInfo: HostExit | undefined;
  private readonly _onStderrLine = this._register(new Emitter<string>());
  /** Every line the host writes to stderr (its log). */
  readonly onStderrLine = this._onStderrLine.event;
  private readonly _onExit = this._register(new Emitter<HostExit>());
  readonly onExit = this._onExit.event;
  /** Resolves with the ready line; rejects if the host exits or times out first. */
  readonly ready: Promise<ReadyLine>;
  readonly exited: Promise<HostExit>;

  constructor(private readonly options: HostSpawnOptions) {
    super();
    this.child = spawn(options.python, ['-m', 'empo2.cli', 'serve', ...options.args], {
      cwd: options.cwd,
      env: {
        ...process.env,
        ...options.env,
        [TOKEN_ENV]: this.token,
        EMPO2_HOST_EXIT_ON_STDIN_EOF: '1',
        PYTHONUNBUFFERED: '1',
        EMPO2_NO_PROGRESS: '1',
      },
      // stdin stays open and unused: its end tells the host that we are gone.
      stdio: ['pipe', 'pipe', 'pipe'],
      windowsHide: true,
    });
    this.child.stdin?.on('error', () => undefined);
    this.exited = new Promise((resolve) => {
      const exited = (code: number | null, signal: NodeJS.Signals | null) => {
        if (!this.exitInfo) {
          this.exitInfo = { code, signal };
          this._onExit.fire(this.exitInfo);
          resolve(this.exitInfo);
        }
      };
      this.child.once('exit', exited);
      // A process that could not be spawned at all (no such interpreter) never emits 'exit'.
      this.child.once('error', () => this.child.pid === undefined && exited(null, null));
    });
    const stderr = createInterface({ input: this.child.stderr! });
    stderr.on('line', (line) => {
      this.tail.push(line);
      if (this.tail.length > (options.tailLines ?? 40)) {
        this.tail.shift();
      }
      this._onStderrLine.fire(line);
    });
    this.ready = this.readReadyLine();
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  get hasExited(): boolean {
    return this.exitInfo !== undefined;
  }

  /** The last lines the host wrote to stderr, for a crash report. */
  stderrTail(lines = 12): string {
    return this.tail.slice(-lines).join('\n');
  }

  /**
   * Asks the host to stop (SIGTERM: the live run stops at its next iteration boundary) and
   * kills it if it has not exited after `graceMs`. Resolves once the process is gone.
   */
  async stop(graceMs = 5_000): Promise<HostExit> {
    if (!this.exitInfo) {
      this.signal('SIGTERM');
      const timer = setTimeout(() => this.signal('SIGKILL'), graceMs);
      await this.exited;
      clearTimeout(timer);
    }
    return this.exitInfo!;
  }

  override dispose(): void {
    if (!this.exitInfo) {
      // Disposal cannot wait: ask politely, then make sure. The stdin EOF is a third guard.
      this.signal('SIGTERM');
      const timer = setTimeout(() => this.signal('SIGKILL'), 3_000);
      timer.unref();
      this.child.stdin?.end();
    }
    super.dispose();
  }

  private signal(name: NodeJS.Signals): void {
    try {
      this.child.kill(name);
    } catch {
      // Already gone.
    }
  }

  private readReadyLine(): Promise<ReadyLine> {
    const timeoutMs = this.options.readyTimeoutMs ?? 180_000;
    return new Promise<ReadyLine>((resolve, reject) => {
      const stdout = createInterface({ input: this.child.stdout! });
      let settled = false;
      const settle = (action: () => void) => {
        if (!settled) {
          settled = true;
          clearTimeout(timer);
          action();
        }
      };
      const timer = setTimeout(() => {
        settle(() =>
          reject(new HostStartError(`the host printed no ready line within ${timeoutMs / 1000} s`, this.stderrTail())),
        );
        this.signal('SIGKILL');
      }, timeoutMs);
      stdout.once('line', (line) => {
        try {
          const ready = JSON.parse(line) as ReadyLine;
          if (ready.event !== 'ready' || !Number.isInteger(ready.port)) {
            throw new Error('not a ready line');
          }
          settle(() => resolve(ready));
        } catch {
          settle(() =>
            reject(
              new HostStartError(
                `the host's first line is not its ready line: ${line.slice(0, 200)}`,
                this.stderrTail(),
              ),
            ),
          );
        }
      });
      this.child.once('error', (error) => {
        settle(() => reject(new HostStartError(`cannot run ${this.options.python}: ${error.message}`, '')));
      });
      this.child.once('exit', (code, signal) => {
        // Give stderr a moment to drain so the report carries the host's last words.
        setTimeout(() => {
          const how = signal ? `was killed by ${signal}` : `exited with code ${code}`;
          settle(() => reject(new HostStartError(`the host ${how} before it was ready`, this.stderrTail())));
        }, 100);
      });
    });
  }
}
