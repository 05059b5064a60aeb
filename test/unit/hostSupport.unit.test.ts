import * as assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import * as path from 'node:path';
import { checkHostInstalled, chooseInterpreter, hostSources, projectVenvPython } from '../../src/host/interpreter';

const root = path.resolve(__dirname, '../../../..');

describe("choosing the host's interpreter", () => {
  it("prefers the setting, then the Python extension's choice, then the project .venv", () => {
    const base = { settingPath: '', pythonExtensionPath: undefined, projectRoot: '/repo', platform: 'linux' as const };
    assert.deepEqual(chooseInterpreter({ ...base, settingPath: '/opt/py/bin/python' }), {
      python: '/opt/py/bin/python',
      source: 'setting',
    });
    assert.deepEqual(chooseInterpreter({ ...base, pythonExtensionPath: '/home/u/.pyenv/python' }), {
      python: '/home/u/.pyenv/python',
      source: 'python-extension',
    });
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
