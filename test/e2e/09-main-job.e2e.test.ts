import * as assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Page } from 'playwright-core';
import { e2eSession } from './session';
import { Workbench } from './workbench';

// The README's main job as a newcomer meets it, after its installs: scripts/run.sh ends in
// `scripts/vscode-open.sh --train builtin`, which builds the .vsix, installs it into code-server
// with the settings that make the extension start the host and train the built-in preset, and
// serves VS Code. This file runs that script itself (into a folder and a profile of its own,
// with the caches the tier already prepared) and watches the window it serves: the run appears,
// and its first episode shows in the Trajectories tree before its first iteration is written; a
// reload of the page goes on with that run.

const repoRoot = path.resolve(__dirname, '..', '..', '..', '..');

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/** Resolves once something listens on the port (the script prints its URL just before it starts
 * code-server, which then takes seconds to listen). */
async function listening(port: number, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const open = await new Promise<boolean>((resolve) => {
      const socket = net.connect(port, '127.0.0.1', () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
    if (open) {
      return;
    }
    if (Date.now() > deadline) {
      throw new Error(`nothing listens on port ${port} after ${timeoutMs} ms`);
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

/** Spawns the script in its own process group (code-server, its extension host and the training
 * host all die with it) and resolves with the URL it prints. */
function openVsCode(
  workspace: string,
  profile: string,
  port: number,
): { child: ChildProcess; url: Promise<string>; output: string[] } {
  const child = spawn('bash', ['scripts/vscode-open.sh', '--train', 'builtin', '--port', String(port), workspace], {
    cwd: repoRoot,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: {
      ...process.env,
      EMPO2_VSCODE_PROFILE: profile,
      EMPO2_FORCE_CODE_SERVER: '1',
      HF_HUB_OFFLINE: '1',
      TRANSFORMERS_OFFLINE: '1',
    },
  });
  const output: string[] = [];
  const url = new Promise<string>((resolve, reject) => {
    const read = (chunk: Buffer) => {
      output.push(chunk.toString());
      const found = /EMPO2_VSCODE_URL=(\S+)/.exec(output.join(''));
      if (found) {
        resolve(found[1]);
      }
    };
    child.stdout?.on('data', read);
    child.stderr?.on('data', (chunk: Buffer) => output.push(chunk.toString()));
    child.once('exit', (code) =>
      reject(new Error(`vscode-open.sh exited ${code} before printing its URL:\n${output.join('').slice(-2000)}`)),
    );
  });
  return { child, url, output };
}

function stopGroup(child: ChildProcess): void {
  if (child.pid === undefined || child.exitCode !== null) {
    return;
  }
  try {
    process.kill(-child.pid, 'SIGKILL');
  } catch {
    // already gone
  }
}

/** The run folder the extension started in the workspace, once there is one. */
function runFolder(workspace: string): string | undefined {
  const root = path.join(workspace, '.empo2', 'runs');
  const runs = existsSync(root) ? readdirSync(root).filter((name) => name.startsWith('builtin')) : [];
  return runs.length ? path.join(root, runs[0]) : undefined;
}

/** What the auto-start decided in each window so far, from the extension's log files in the
 * profile (one per window's extension host), oldest window first. */
function autoStartDecisions(profile: string): string[] {
  const logs = path.join(profile, 'user-data', 'logs');
  const files: string[] = [];
  const walk = (dir: string): void => {
    for (const entry of existsSync(dir) ? readdirSync(dir, { withFileTypes: true }) : []) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) {
        walk(full);
      } else if (entry.name === 'EMPO² Host.log') {
        files.push(full);
      }
    }
  };
  walk(logs);
  return files.sort().flatMap((file) =>
    readFileSync(file, 'utf8')
      .split('\n')
      .filter((line) => line.includes('Auto-start:')),
  );
}

function metricsLines(folder: string): number {
  const file = path.join(folder, 'metrics.jsonl');
  return existsSync(file)
    ? readFileSync(file, 'utf8')
        .split('\n')
        .filter((line) => line.trim()).length
    : 0;
}

describe('The main job: scripts/run.sh opens VS Code training the built-in default', () => {
  const scratch = mkdtempSync(path.join(os.tmpdir(), 'empo2-main-job-'));
  const workspace = path.join(scratch, 'workspace');
  const profile = path.join(scratch, 'profile');
  let opened: ReturnType<typeof openVsCode> | undefined;
  let page: Page | undefined;
  let url = '';

  after(async () => {
    await page?.close().catch(() => undefined);
    if (opened) {
      stopGroup(opened.child);
    }
    rmSync(scratch, { recursive: true, force: true });
  });

  it('serves VS Code, trains, and shows the first episode before the first iteration is written', async function () {
    this.timeout(600_000);
    const started = Date.now();
    const session = e2eSession();
    mkdirSync(workspace, { recursive: true });
    const port = await freePort();
    opened = openVsCode(workspace, profile, port);
    url = await opened.url;
    await listening(port, 60_000);
    // Only VS Code's own port is served: not every port listening on the machine under /proxy/.
    const settings = readFileSync(path.join(profile, 'user-data', 'User', 'settings.json'), 'utf8');
    assert.match(settings, /"remote\.autoForwardPorts": false/);
    session.measurements['main job: vscode-open.sh to URL (s)'] = (Date.now() - started) / 1000;

    page = await session.page.context().newPage();
    const workbench = new Workbench(page);
    await page.goto(url);
    await page.locator('.part.statusbar .statusbar-item').filter({ hasText: 'EMPO²' }).waitFor({ timeout: 120_000 });
    // The extension opens its views itself: the newcomer does not hunt for the activity bar icon.
    const run = await workbench.waitForTreeRow(/^builtin/, 180_000);
    const runShown = Date.now();
    await workbench.expandRow(run);
    session.measurements['main job: vscode-open.sh to the run in the tree (s)'] = (runShown - started) / 1000;
    const folder = await workbench.eventually('the run folder', async () => runFolder(workspace), 60_000);
    // The iteration in progress gets its row when its first episode ends (a row saying what the
    // run waits for stands there until then): read the run folder the moment it shows.
    const iteration = await workbench.waitForTreeRow(/^Iteration 1\b/, 180_000);
    const lines = metricsLines(folder);
    session.measurements['main job: run in the tree to its first episode (s)'] = (Date.now() - runShown) / 1000;
    await workbench.screenshot('80-main-job-first-episode');
    assert.equal(lines, 0, 'the first episode showed only after the first iteration was written');
    assert.match(await iteration.innerText(), /episodes/, 'the row counts the episodes that ended');

    // And the run goes on to write its first iteration.
    await workbench.eventually(
      'the first iteration written',
      async () => (metricsLines(folder) > 0 ? true : undefined),
      300_000,
    );
    session.measurements['main job: vscode-open.sh to the first metrics line (s)'] = (Date.now() - started) / 1000;
  });

  it('goes on with the same run when the page is reloaded, and starts no second one', async function () {
    this.timeout(600_000);
    const folder = runFolder(workspace)!;
    const before = metricsLines(folder);
    await page!.reload();
    const workbench = new Workbench(page!);
    await page!
      .locator('.part.statusbar .statusbar-item')
      .filter({ hasText: 'EMPO²' })
      .first()
      .waitFor({ timeout: 120_000 });
    await workbench.waitForTreeRow(/^builtin/, 180_000);
    // The reload shut the old window's host down mid-iteration (the run interrupted); the new
    // window's resumes it from its checkpoint and it writes on.
    await workbench.eventually(
      'the run to write another iteration',
      async () => (metricsLines(folder) > before ? true : undefined),
      300_000,
    );
    await workbench.screenshot('81-main-job-after-reload');
    const runs = readdirSync(path.dirname(folder)).filter((name) => name.startsWith('builtin'));
    assert.deepEqual(runs, [path.basename(folder)], 'one run, the same');
  });

  it('shows the same run in another browser, whose storage knows nothing of it, starts no second one, and follows it', async function () {
    this.timeout(600_000);
    const folder = runFolder(workspace)!;
    const decided = autoStartDecisions(profile).length;
    // Another browser (or a private window): VS Code's state kept in the browser is not there.
    const other = await e2eSession().page.context().browser()!.newContext();
    try {
      const second = await other.newPage();
      await second.goto(url);
      const workbench = new Workbench(second);
      const decision = await workbench.eventually(
        "the new window's auto-start to decide",
        async () => autoStartDecisions(profile)[decided],
        180_000,
      );
      await workbench.waitForTreeRow(/^builtin/, 60_000);
      // Its tips too, though the first window's host holds the run's memory: this window's host
      // reads them from a snapshot (an internal error here before).
      const tips = (await workbench.webviewFrame('empo2-tips-panel')).locator('empo2-tips-panel');
      await tips.getByText(new RegExp(`^${path.basename(folder)} · [1-9]\\d* tips?`)).waitFor({ timeout: 60_000 });
      assert.equal(await tips.getByText(/internal error/).count(), 0);
      await workbench.screenshot('82-main-job-another-browser');
      assert.match(decision, new RegExp(`showing run ${path.basename(folder)}`), decision);
      const runs = readdirSync(path.dirname(folder)).filter((name) => name.startsWith('builtin'));
      assert.deepEqual(runs, [path.basename(folder)], 'one run, the same');
      // Its metrics open, and move: this window's host follows what the first one's writes.
      const metrics = (await workbench.webviewFrame('empo2-metrics-panel', 60_000)).locator('empo2-metrics-panel');
      await metrics.getByText('running in another process').waitFor({ timeout: 60_000 });
      // The status bar names the iteration the first window's trainer is in (its progress.json).
      await workbench.statusBarItem('rollout elsewhere').waitFor({ timeout: 60_000 });
      const shown = async () => Number((await metrics.getByTestId('points').innerText()).split(' ')[0]);
      const before = metricsLines(folder);
      await workbench.eventually(
        "the charts to move with the first window's run",
        async () => ((await shown()) > before ? true : undefined),
        300_000,
      );
      await workbench.screenshot('83-main-job-another-browser-follows');
    } finally {
      await other.close();
    }
  });

  it('Ctrl-C in the terminal stops the training host first: the tab says so before VS Code goes', async function () {
    this.timeout(180_000);
    const workbench = new Workbench(page!);
    const folder = runFolder(workspace)!;
    await workbench.statusBarItem('EMPO²').first().waitFor({ timeout: 60_000 });
    const pressed = Date.now();
    // What a terminal's Ctrl-C does: SIGINT to the foreground process group, the script's.
    process.kill(-opened!.child.pid!, 'SIGINT');
    await page!.getByText('the training host stopped by itself').first().waitFor({ timeout: 60_000 });
    e2eSession().measurements['main job: Ctrl-C to the tab saying the host stopped (s)'] =
      (Date.now() - pressed) / 1000;
    await workbench.screenshot('84-main-job-ctrl-c');
    const exitCode = await new Promise<number | null>((resolve) => {
      if (opened!.child.exitCode !== null) {
        resolve(opened!.child.exitCode);
      } else {
        opened!.child.once('exit', (code) => resolve(code));
      }
    });
    assert.equal(exitCode, 130, opened!.output.join('').slice(-2000));
    const state = (JSON.parse(readFileSync(path.join(folder, 'run.json'), 'utf8')) as { state: string }).state;
    assert.equal(state, 'interrupted', 'the run stays at its last checkpoint, to resume');
    await assert.rejects(listening(Number(new URL(url).port), 1_000), 'code-server stopped with the script');
  });
});
