import * as assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type * as vscode from 'vscode';
import { folderStateFile } from '../../src/common/folderState';
import type { Settings } from '../../src/common/settings';
import { RunRoots } from '../../src/host/runRoots';

// The folders Open Run Folder adds as run roots are remembered on the extension host's machine,
// per workspace folder: another browser on the same code-server, or another window on the folder,
// spawns its host with them too.

const FALLBACK = '/home/ada/.empo2-storage/runs';
const NO_SETTING = { runRoot: undefined } as unknown as Settings;

/** Workspace state as a browser keeps it (what earlier versions wrote to). */
function browserState(values: Record<string, unknown> = {}): vscode.Memento {
  return {
    get: (key: string, fallback?: unknown) => (key in values ? values[key] : fallback),
  } as unknown as vscode.Memento;
}

describe('the run roots of a workspace folder', () => {
  let storage: string;
  beforeEach(() => {
    storage = path.join(mkdtempSync(path.join(os.tmpdir(), 'empo2-roots-')), 'globalStorage');
  });
  afterEach(() => rmSync(path.dirname(storage), { recursive: true, force: true }));

  const rootsOf = (folder: string, state = browserState()) =>
    new RunRoots(NO_SETTING, FALLBACK, folderStateFile(storage, 'run-roots', folder), state);

  it('lists the configured root first, and the fallback when none is configured', () => {
    assert.deepEqual(rootsOf('/home/ada/project').list(), [FALLBACK]);
    const configured = { runRoot: { fsPath: '/home/ada/project/.empo2/runs' } } as unknown as Settings;
    const roots = new RunRoots(
      configured,
      FALLBACK,
      folderStateFile(storage, 'run-roots', '/home/ada/project'),
      browserState(),
    );
    roots.add('/data/runs');
    assert.deepEqual(roots.list(), ['/home/ada/project/.empo2/runs', '/data/runs']);
  });

  it('keeps an added folder for every later window on the folder, whatever browser it opens in', () => {
    rootsOf('/home/ada/project').add('/data/old-runs');
    rootsOf('/home/ada/project').add('/data/more-runs');
    rootsOf('/home/ada/project').add('/data/old-runs');
    assert.deepEqual(
      rootsOf('/home/ada/project').list(),
      [FALLBACK, '/data/old-runs', '/data/more-runs'],
      'in order, once each',
    );
    assert.deepEqual(rootsOf('/home/ada/other').list(), [FALLBACK], 'another workspace folder has its own');
    const file = folderStateFile(storage, 'run-roots', '/home/ada/project');
    assert.deepEqual(readdirSync(path.dirname(file)).sort(), [path.basename(file)], 'no partial file left behind');
  });

  it("still lists what an earlier version kept in this browser's workspace state", () => {
    const earlier = browserState({ 'empo2.extraRunRoots': ['/data/kept-here', 7] });
    const roots = rootsOf('/home/ada/project', earlier);
    roots.add('/data/new');
    assert.deepEqual(roots.list(), [FALLBACK, '/data/new', '/data/kept-here']);
  });

  it('counts a damaged file as no added folder, and adds over it', () => {
    const file = folderStateFile(storage, 'run-roots', '/home/ada/project');
    rootsOf('/home/ada/project').add('/data/runs');
    for (const text of ['["/data/ru', '{"roots": []}', '"/data/runs"']) {
      writeFileSync(file, text);
      assert.deepEqual(rootsOf('/home/ada/project').list(), [FALLBACK], text);
    }
    rootsOf('/home/ada/project').add('/data/again');
    assert.deepEqual(rootsOf('/home/ada/project').list(), [FALLBACK, '/data/again']);
  });
});
