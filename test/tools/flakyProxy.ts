import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import * as path from 'node:path';
import * as readline from 'node:readline';

// The Node side of host/tests/flaky_proxy.py, the one flaky-network proxy of the project's tests:
// spawns it with the project's Python, and turns its stdin/stdout commands into promises.
//
//   const proxy = await FlakyProxy.start(python, hostPort);
//   connect the extension to proxy.url; await proxy.freeze(); …; await proxy.thaw(); proxy.stop();

export interface ProxyStats {
  readonly ok?: string;
  readonly links: number;
  readonly linksOpened: number;
  readonly bytes: number;
  readonly frozen: readonly string[];
  readonly listening: boolean;
  readonly time?: number;
}

const SCRIPT = path.join(__dirname, '..', '..', '..', '..', 'host', 'tests', 'flaky_proxy.py');

export class FlakyProxy {
  private readonly answers: Array<(line: Record<string, unknown>) => void> = [];

  private constructor(
    private readonly child: ChildProcessWithoutNullStreams,
    readonly port: number,
    lines: readline.Interface,
  ) {
    lines.on('line', (line) => this.answers.shift()?.(JSON.parse(line) as Record<string, unknown>));
  }

  /** Listens on a free loopback port and forwards to 127.0.0.1:targetPort; exits after lifetimeS. */
  static start(python: string, targetPort: number, lifetimeS = 600, script = SCRIPT): Promise<FlakyProxy> {
    const child = spawn(python, [script, '--target-port', String(targetPort), '--lifetime', String(lifetimeS)], {
      stdio: 'pipe',
    });
    const lines = readline.createInterface({ input: child.stdout });
    let stderr = '';
    child.stderr.on('data', (chunk) => (stderr += String(chunk)));
    return new Promise((resolve, reject) => {
      const failed = (why: string) =>
        reject(new Error(`the flaky proxy did not start: ${why}${stderr ? `\n${stderr}` : ''}`));
      child.once('error', (error) => failed(error.message));
      child.once('exit', (code) => failed(`exit code ${code}`));
      lines.once('line', (line) => {
        const ready = JSON.parse(line) as { event?: string; port?: number };
        if (ready.event !== 'ready' || !ready.port) {
          failed(line);
          return;
        }
        child.removeAllListeners('exit');
        resolve(new FlakyProxy(child, ready.port, lines));
      });
    });
  }

  get url(): string {
    return `ws://127.0.0.1:${this.port}`;
  }

  cut(): Promise<ProxyStats> {
    return this.command('cut');
  }

  refuse(): Promise<ProxyStats> {
    return this.command('refuse');
  }

  accept(): Promise<ProxyStats> {
    return this.command('accept');
  }

  /** Nothing moves (both ways, or only `up` client → host / `down` host → client); nothing closes. */
  freeze(direction: 'both' | 'up' | 'down' = 'both'): Promise<ProxyStats> {
    return this.command(direction === 'both' ? 'freeze' : `freeze ${direction}`);
  }

  thaw(): Promise<ProxyStats> {
    return this.command('thaw');
  }

  stats(): Promise<ProxyStats> {
    return this.command('stats');
  }

  stop(): void {
    this.child.stdin.end('quit\n');
    setTimeout(() => this.child.kill(), 2_000).unref();
  }

  private command(line: string): Promise<ProxyStats> {
    return new Promise((resolve, reject) => {
      this.answers.push((answer) =>
        answer.error ? reject(new Error(String(answer.error))) : resolve(answer as unknown as ProxyStats),
      );
      this.child.stdin.write(`${line}\n`);
    });
  }
}
