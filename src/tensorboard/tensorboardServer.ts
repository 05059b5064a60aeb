import { spawn } from 'node:child_process';
import * as path from 'node:path';
import type { IDisposable } from '../common/lifecycle';

// TensorBoard for the runs that mirror to it (report_to=tensorboard writes <run>/tensorboard/):
// one TensorBoard process per log folder, started from the host's Python on a free loopback port
// (--port 0: the system picks it; TensorBoard prints the address once it serves), reused by every
// later Open, restarted when it has died, stopped with the window. Free of vscode.

/** What a started TensorBoard is to its owner: where it serves, and how to stop it. */
export interface RunningTensorBoard {
  readonly url: string;
  /** False once the process has exited (killed from outside, crashed). */
  readonly alive: () => boolean;
  readonly stop: () => void;
}

export type StartTensorBoard = (logdir: string) => Promise<RunningTensorBoard>;

/** A start that failed, in one sentence for the person (`notInstalled`: the trackers extra is missing). */
export class TensorBoardError extends Error {
  constructor(
    message: string,
    readonly notInstalled = false,
  ) {
    super(message);
  }
}

/** The address in TensorBoard's "TensorBoard 2.21.0 at http://127.0.0.1:40123/ (Press CTRL+C to quit)". */
export function servingUrl(output: string): string | undefined {
  return /TensorBoard \S+ at (http:\/\/[^\s/]+\/\S*)/.exec(output)?.[1];
}

/** Whether a Python that failed to start TensorBoard lacks the package. */
export function lacksTensorBoard(output: string): boolean {
  return /No module named '?tensorboard/.test(output);
}

/** The install command that brings TensorBoard (the trackers extra, pinned with its hashes). */
export function installCommand(python: string, projectRoot: string): string {
  return `${python} -m pip install --require-hashes -r ${path.join(projectRoot, 'host', 'requirements-trackers.lock')}`;
}

export function notInstalledMessage(python: string, projectRoot: string): string {
  return `EMPO²: TensorBoard is not installed in ${python}; install the trackers extra with: ${installCommand(python, projectRoot)}`;
}

export function noMirrorMessage(runId: string): string {
  return `EMPO²: run ${runId} mirrors to no TensorBoard (its folder has no tensorboard/); train with report_to=tensorboard.`;
}

export function noMirrorInRootMessage(root: string): string {
  return `EMPO²: no run in ${root} mirrors to TensorBoard; train with report_to=tensorboard.`;
}

/** The arguments of `<python> -m tensorboard.main` for a log folder, on loopback only. */
export function tensorBoardArgs(logdir: string): string[] {
  return ['-m', 'tensorboard.main', '--logdir', logdir, '--host', '127.0.0.1', '--port', '0'];
}

/**
 * Starts `<python> -m tensorboard.main` and resolves once it prints where it serves; rejects with
 * a TensorBoardError when it exits first or says nothing within `timeoutMs`.
 */
export function startTensorBoardProcess(
  python: string,
  projectRoot: string,
  logdir: string,
  timeoutMs = 60_000,
): Promise<RunningTensorBoard> {
  return new Promise((resolve, reject) => {
    const child = spawn(python, tensorBoardArgs(logdir), {
      cwd: logdir,
      windowsHide: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    let exited = false;
    let settled = false;
    const settle = (action: () => void) => {
      if (!settled) {
        settled = true;
        clearTimeout(timer);
        action();
      }
    };
    const stop = () => {
      if (!exited) {
        child.kill();
      }
    };
    const timer = setTimeout(
      () =>
        settle(() => {
          stop();
          reject(
            new TensorBoardError(
              `EMPO²: TensorBoard for ${logdir} did not start serving within ${Math.round(timeoutMs / 1000)} s.`,
            ),
          );
        }),
      timeoutMs,
    );
    const read = (chunk: Buffer) => {
      output = (output + chunk.toString()).slice(-20_000);
      const url = servingUrl(output);
      if (url) {
        settle(() => resolve({ url, alive: () => !exited, stop }));
      }
    };
    child.stdout.on('data', read);
    child.stderr.on('data', read);
    child.on('error', (error) =>
      settle(() => reject(new TensorBoardError(`EMPO²: cannot run ${python} for TensorBoard (${error.message}).`))),
    );
    child.on('exit', (code) => {
      exited = true;
      settle(() => {
        if (lacksTensorBoard(output)) {
          reject(new TensorBoardError(notInstalledMessage(python, projectRoot), true));
          return;
        }
        const last = output.trim().split('\n').slice(-1)[0] || `exit code ${code}`;
        reject(new TensorBoardError(`EMPO²: TensorBoard for ${logdir} stopped before it served: ${last}`));
      });
    });
  });
}

/** One TensorBoard per log folder: an Open reuses the one serving it, or starts one. */
export class TensorBoardServers implements IDisposable {
  private readonly servers = new Map<string, Promise<RunningTensorBoard>>();

  constructor(private readonly start: StartTensorBoard) {}

  /** Where TensorBoard serves `logdir`, started when none serves it (or the last one died). */
  async open(logdir: string): Promise<string> {
    const key = path.resolve(logdir);
    const existing = this.servers.get(key);
    if (existing) {
      const running = await existing.catch(() => undefined);
      if (running?.alive()) {
        return running.url;
      }
      if (this.servers.get(key) === existing) {
        this.servers.delete(key);
      }
    }
    let starting = this.servers.get(key);
    if (!starting) {
      starting = this.start(key);
      this.servers.set(key, starting);
      // A failed start is not kept: the next Open tries again.
      starting.catch(() => {
        if (this.servers.get(key) === starting) {
          this.servers.delete(key);
        }
      });
    }
    return (await starting).url;
  }

  /** How many log folders have a TensorBoard started or starting. */
  get size(): number {
    return this.servers.size;
  }

  dispose(): void {
    for (const starting of this.servers.values()) {
      starting.then(
        (running) => running.stop(),
        () => undefined,
      );
    }
    this.servers.clear();
  }
}
