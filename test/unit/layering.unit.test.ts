import * as assert from 'node:assert/strict';
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import * as path from 'node:path';

// The extension's folders form layers that import one way only (docs/architecture.md):
//   common, rpc  →  host  →  runs  →  trajectories, tips  →  extension.ts and the files beside it
// A folder not named here is a feature of its own: it may use every layer, and only the files at
// the top (extension.ts, ...) may use it. Checked on the import statements of src/ as written.

const root = path.resolve(__dirname, '../../../..');
const src = path.join(root, 'src');

/** Rank of each known folder: a file may import its own folder and lower ranks only. */
const LAYERS: Record<string, number> = { common: 0, rpc: 1, host: 2, runs: 3, trajectories: 4, tips: 4 };
const FEATURE = 5;
const TOP = 6;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    return entry.isDirectory() ? sourceFiles(full) : entry.name.endsWith('.ts') ? [full] : [];
  });
}

/** The src/ files a file imports (relative imports and re-exports, type-only ones included). */
function importsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const targets: string[] = [];
  for (const match of text.matchAll(/(?:^|\n)\s*(?:import|export)\s[^'";]*?from\s+'(\.[^']+)'/g)) {
    const base = path.resolve(path.dirname(file), match[1]);
    const target = [`${base}.ts`, path.join(base, 'index.ts'), base].find(
      (candidate) => existsSync(candidate) && statSync(candidate).isFile(),
    );
    assert.ok(target, `${path.relative(root, file)} imports ${match[1]}, which is not a file`);
    targets.push(target);
  }
  return targets;
}

/** The folder directly under src/ ('' for the files at the top). */
function folderOf(file: string): string {
  const parts = path.relative(src, file).split(path.sep);
  return parts.length > 1 ? parts[0] : '';
}

function rankOf(folder: string): number {
  return folder === '' ? TOP : (LAYERS[folder] ?? FEATURE);
}

const files = sourceFiles(src);
const graph = new Map(
  files.map((file) => [file, importsOf(file).filter((target) => target.startsWith(src + path.sep))]),
);
const name = (file: string) => path.relative(src, file).split(path.sep).join('/');

describe('layering of src/', () => {
  it('has the feature folders and no grab-bags', () => {
    for (const folder of [...Object.keys(LAYERS)]) {
      assert.ok(existsSync(path.join(src, folder)), `src/${folder} is missing`);
    }
    for (const grabBag of ['views', 'commands', 'webviews']) {
      assert.ok(
        !existsSync(path.join(src, grabBag)),
        `src/${grabBag}/ is back; put its files into their feature's folder`,
      );
    }
  });

  it('imports only downwards: a folder uses its own files and lower layers', () => {
    const upward: string[] = [];
    for (const [file, targets] of graph) {
      const from = folderOf(file);
      for (const target of targets) {
        const to = folderOf(target);
        if (to !== from && rankOf(to) >= rankOf(from)) {
          upward.push(`${name(file)} → ${name(target)}`);
        }
      }
    }
    assert.deepEqual(upward, []);
  });

  it('has no import cycles', () => {
    const cycles: string[] = [];
    const state = new Map<string, 'open' | 'done'>();
    const stack: string[] = [];
    const visit = (file: string): void => {
      state.set(file, 'open');
      stack.push(file);
      for (const target of graph.get(file) ?? []) {
        if (state.get(target) === 'open') {
          cycles.push([...stack.slice(stack.indexOf(target)), target].map(name).join(' → '));
        } else if (!state.has(target)) {
          visit(target);
        }
      }
      stack.pop();
      state.set(file, 'done');
    };
    for (const file of files) {
      if (!state.has(file)) {
        visit(file);
      }
    }
    assert.deepEqual(cycles, []);
  });
});
