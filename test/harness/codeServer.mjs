// Starts and stops a code-server (the real VS Code workbench and extension host, from npm) for
// one test tier: loopback only, no auth, and all of its state (HOME, XDG folders, user data,
// extensions, workspace) in a fresh temporary folder so nothing touches the user's own.
import { spawn } from 'node:child_process';
import { createWriteStream, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { vscodeTools } from './paths.mjs';

/** User settings that keep the screen clean and the network quiet. */
const CLEAN_SETTINGS = {
  'telemetry.telemetryLevel': 'off',
  'update.mode': 'none',
  'update.showReleaseNotes': false,
  'extensions.autoUpdate': false,
  'extensions.autoCheckUpdates': false,
  'extensions.ignoreRecommendations': true,
  'workbench.enableExperiments': false,
  'workbench.startupEditor': 'none',
  'workbench.tips.enabled': false,
  'workbench.welcomePage.walkthroughs.openOnInstall': false,
  'workbench.secondarySideBar.defaultVisibility': 'hidden',
  'chat.disableAIFeatures': true,
  'chat.commandCenter.enabled': false,
  'git.enabled': false,
  'remote.autoForwardPorts': false,
  'security.workspace.trust.enabled': false,
};

export async function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/**
 * A fresh folder tree for one code-server: home, user data, extensions and a workspace.
 * `settings` are added to the user settings (e.g. empo2.pythonPath).
 */
export function makeSandbox(label, settings = {}) {
  const root = mkdtempSync(path.join(os.tmpdir(), `empo2-${label}-`));
  const dirs = {
    root,
    home: path.join(root, 'home'),
    userData: path.join(root, 'user-data'),
    extensions: path.join(root, 'extensions'),
    workspace: path.join(root, 'workspace'),
  };
  for (const dir of Object.values(dirs)) {
    mkdirSync(dir, { recursive: true });
  }
  mkdirSync(path.join(dirs.userData, 'User'), { recursive: true });
  writeFileSync(
    path.join(dirs.userData, 'User', 'settings.json'),
    JSON.stringify({ ...CLEAN_SETTINGS, ...settings }, null, 2),
  );
  // code-server is a remote setup: machine-scoped settings (empo2.pythonPath) are read from the
  // Machine settings, and ignored in the User settings.
  mkdirSync(path.join(dirs.userData, 'Machine'), { recursive: true });
  writeFileSync(path.join(dirs.userData, 'Machine', 'settings.json'), JSON.stringify(settings, null, 2));
  return dirs;
}

function sandboxEnv(sandbox, extraEnv) {
  const env = { ...process.env, ...extraEnv };
  // Keep any parent VS Code's variables out: they would point code-server at the wrong IPC.
  for (const key of Object.keys(env)) {
    if (key.startsWith('VSCODE_') || key === 'ELECTRON_RUN_AS_NODE') {
      delete env[key];
    }
  }
  return {
    ...env,
    HOME: sandbox.home,
    XDG_CONFIG_HOME: path.join(sandbox.home, '.config'),
    XDG_DATA_HOME: path.join(sandbox.home, '.local', 'share'),
    XDG_CACHE_HOME: path.join(sandbox.home, '.cache'),
    XDG_STATE_HOME: path.join(sandbox.home, '.local', 'state'),
    // Node 24 first on PATH: code-server and the extension host it forks run on it.
    PATH: `${path.dirname(vscodeTools.node)}:${env.PATH ?? ''}`,
  };
}

function commonArgs(sandbox) {
  return ['--user-data-dir', sandbox.userData, '--extensions-dir', sandbox.extensions];
}

/** Installs a .vsix into the sandbox's extensions folder with code-server's own CLI. */
export async function installExtension(sandbox, vsixPath) {
  const child = spawn(
    vscodeTools.node,
    [vscodeTools.codeServer, ...commonArgs(sandbox), '--force', '--install-extension', vsixPath],
    { env: sandboxEnv(sandbox, {}), stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  child.stdout.on('data', (chunk) => (output += chunk));
  child.stderr.on('data', (chunk) => (output += chunk));
  const code = await new Promise((resolve) => child.once('exit', resolve));
  if (code !== 0) {
    throw new Error(`code-server --install-extension failed (exit ${code}):\n${output}`);
  }
  return output;
}

/**
 * Starts code-server on 127.0.0.1 on a free port and waits until it answers /healthz.
 * Returns { url, port, pid, logFile, stop() }; stop() ends it (and its children) by its id.
 */
export async function startCodeServer({ sandbox, logFile, env = {}, smokeTestDriver = false }) {
  const port = await freePort();
  const args = [
    vscodeTools.codeServer,
    '--bind-addr',
    `127.0.0.1:${port}`,
    '--auth',
    'none',
    '--disable-telemetry',
    '--disable-update-check',
    '--disable-workspace-trust',
    '--disable-getting-started-override',
    '--ignore-last-opened',
    ...commonArgs(sandbox),
  ];
  if (smokeTestDriver) {
    // Lets a page pass extensionDevelopmentPath/extensionTestsPath in the URL's payload, and
    // makes the workbench call window.codeAutomationExit when the test extension host ends.
    args.push('--vscode-option', 'enable-smoke-test-driver');
  }
  mkdirSync(path.dirname(logFile), { recursive: true });
  const log = createWriteStream(logFile);
  // Its own process group, so stop() also ends the file watchers and extension hosts it forks.
  const child = spawn(vscodeTools.node, args, {
    env: sandboxEnv(sandbox, env),
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  child.stdout.pipe(log);
  child.stderr.pipe(log);
  let exitCode = null;
  const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve((exitCode = code ?? signal))));

  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (exitCode !== null) {
      throw new Error(`code-server exited (${exitCode}) before it was ready; see ${logFile}:\n${tail(logFile)}`);
    }
    try {
      const response = await fetch(`${url}/healthz`);
      if (response.ok) {
        break;
      }
    } catch {
      // Not listening yet.
    }
    if (Date.now() > deadline) {
      await stopGroup(child.pid, exited);
      throw new Error(`code-server did not answer on ${url} within 60 s; see ${logFile}`);
    }
    await sleep(250);
  }

  return {
    url,
    port,
    pid: child.pid,
    logFile,
    async stop() {
      await stopGroup(child.pid, exited);
      log.end();
    },
  };
}

async function stopGroup(pid, exited) {
  const signal = (name) => {
    try {
      process.kill(-pid, name);
    } catch {
      // Already gone.
    }
  };
  signal('SIGTERM');
  const stopped = await Promise.race([exited.then(() => true), sleep(5_000).then(() => false)]);
  // Its file watchers can outlive it for a few seconds; the group kill takes them too.
  await sleep(stopped ? 200 : 0);
  signal('SIGKILL');
}

export function removeSandbox(sandbox) {
  rmSync(sandbox.root, { recursive: true, force: true, maxRetries: 3 });
}

export function tail(file, lines = 40) {
  try {
    return readFileSync(file, 'utf8').split('\n').slice(-lines).join('\n');
  } catch {
    return '';
  }
}
