import * as assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import * as path from 'node:path';
import { HostProcess, HostStartError, newToken } from '../../src/host/hostProcess';
import { isAlive as alive } from '../builders/wait';

// HostProcess against a fake interpreter (test/fixtures/fake-python.js) that behaves like
// `empo2-host serve` in the ways that matter here; the integration tier starts the real host.

const fakePython = path.resolve(__dirname, '../../../../test/fixtures/fake-python.js');

function spawnFake(mode: string, readyTimeoutMs = 10_000): HostProcess {
  return new HostProcess({
    python: fakePython,
    args: ['--run-root', '/home/ada/project/.empo2/runs'],
    cwd: '/tmp',
    env: { FAKE_HOST_MODE: mode },
    readyTimeoutMs,
  });
}

describe('HostProcess', () => {
  it('reads the ready line and passes a fresh token through the environment only', async () => {
    const host = spawnFake('ready');
    const lines: string[] = [];
    host.onStderrLine((line) => lines.push(line));
    try {
      const ready = await host.ready;
      assert.equal(ready.port, 45678);
      assert.equal(ready.pid, host.pid);
      assert.match(host.token, /^[0-9a-f]{64}$/);
      assert.notEqual(host.token, newToken(), 'a fresh token per spawn');
      await new Promise((resolve) => setTimeout(resolve, 50));
      assert.ok(
        lines.some((l) => l.includes('"-m","empo2.cli","serve","--run-root","/home/ada/project/.empo2/runs"')),
        lines.join('\n'),
      );
      assert.ok(lines.some((l) => l.includes('token length 64')));
      assert.ok(!lines.some((l) => l.includes(host.token)), 'the token is not on the command line');
    } finally {
      await host.stop();
    }
  });

  it('reports a host that dies before it is ready, with the tail of its stderr', async () => {
    const host = spawnFake('crash');
    const error = await host.ready.catch((e: unknown) => e);
    assert.ok(error instanceof HostStartError);
    assert.match(error.message, /exited with code 1 before it was ready/);
    assert.match(error.stderrTail, /ValueError: the config is broken/);
  });

  it('refuses a first line that is not the ready line', async () => {
    const host = spawnFake('garbage');
    try {
      await assert.rejects(host.ready, /not its ready line/);
    } finally {
      await host.stop(500);
    }
  });

  it('reports an interpreter that does not exist', async () => {
    const host = new HostProcess({ python: '/nonexistent/python', args: [], cwd: '/tmp' });
    await assert.rejects(host.ready, /cannot run \/nonexistent\/python/);
    assert.equal(host.hasExited, true);
    await host.stop(); // resolves: nothing to wait for
  });

  it('stops with SIGTERM, and kills a host that ignores it after the grace period', async () => {
    const polite = spawnFake('ready');
    await polite.ready;
    const exit = await polite.stop(5_000);
    assert.deepEqual(exit, { code: 0, signal: null });

    const stubborn = spawnFake('stubborn');
    await stubborn.ready;
    const started = Date.now();
    const forced = await stubborn.stop(300);
    assert.equal(forced.signal, 'SIGKILL');
    assert.ok(Date.now() - started < 3_000);
    assert.equal(alive(stubborn.pid!), false);
  });

  it('leaves no orphan when its parent dies without stopping it (stdin closes)', async () => {
    // A parent process spawns the host through HostProcess, prints the host's pid, and is killed.
    const script = `
      const { HostProcess } = require(${JSON.stringify(path.resolve(__dirname, '../../src/host/hostProcess.js'))});
      const host = new HostProcess({ python: ${JSON.stringify(fakePython)}, args: [], cwd: '/tmp', env: { FAKE_HOST_MODE: 'ready' } });
      host.ready.then(() => console.log(host.pid));
    `;
    const parent = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
    const hostPid = await new Promise<number>((resolve) =>
      parent.stdout.once('data', (chunk) => resolve(Number(String(chunk).trim()))),
    );
    assert.ok(alive(hostPid));
    parent.kill('SIGKILL');
    const deadline = Date.now() + 5_000;
    while (alive(hostPid) && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    assert.equal(alive(hostPid), false, 'the host exited when its parent vanished');
  });
});
