import * as assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import * as path from 'node:path';
import { Backoff } from '../../src/host/backoff';
import { checkHostInstalled, chooseInterpreter, hostSources, projectVenvPython } from '../../src/host/interpreter';

const root = path.resolve(__dirname, '../../../..');

describe('reconnect backoff', () => {
  it('doubles from the initial delay up to the cap, then gives up', () => {
    const backoff = new Backoff({ initialMs: 100, maxMs: 1_000, maxAttempts: 6, jitter: 0 });
    const delays: Array<number | undefined> = [];
    for (let i = 0; i < 7; i++) {
      delays.push(backoff.next());
    }
    assert.deepEqual(delays, [100, 200, 400, 800, 1_000, 1_000, undefined]);
    backoff.reset();
    assert.equal(backoff.next(), 100);
  });

  it('spreads delays with jitter, never above the schedule', () => {
    const backoff = new Backoff({ initialMs: 1_000, jitter: 0.5, random: () => 1 });
    assert.equal(backoff.next(), 500);
  });
});

describe('choosing the host\'s interpreter', () => {
  it('prefers the setting, then the Python extension\'s choice, then the project .venv', () => {
    const base = { settingPath: '', pythonExtensionPath: undefined, projectRoot: '/repo', platform: 'linux' as const };
    assert.deepEqual(chooseInterpreter({ ...base, settingPath: '/opt/py/bin/python' }), { python: '/opt/py/bin/python', source: 'setting' });
    assert.deepEqual(chooseInterpreter({ ...base, pythonExtensionPath: '/home/u/.pyenv/python' }), { python: '/home/u/.pyenv/python', source: 'python-extension' });
    assert.deepEqual(chooseInterpreter(base), { python: '/repo/.venv/bin/python', source: 'project-venv' });
    assert.equal(projectVenvPython('C:\\repo', 'win32'), path.join('C:\\repo', '.venv', 'Scripts', 'python.exe'));
  });

  it('finds the host sources it ships (host/ and scripts/setup-host.sh)', () => {
    assert.ok(hostSources(root));
    assert.equal(hostSources('/nonexistent'), undefined);
  });

  it('tells a missing interpreter from a Python without the host', async () => {
    assert.equal((await checkHostInstalled('/nonexistent/python')).kind, 'no-interpreter');
    const system = (await checkHostInstalled('python3')).kind;
    assert.ok(system === 'no-host' || system === 'ok', system);
  });

  it('finds the host in the project .venv when it is set up', async function () {
    const venv = projectVenvPython(root);
    if (!existsSync(venv)) {
      this.skip();
    }
    assert.equal((await checkHostInstalled(venv)).kind, 'ok');
  });
});
