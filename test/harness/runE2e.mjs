// End-to-end tier: packages the extension into a .vsix, installs it into a fresh code-server,
// opens the workbench in headless Chromium, and runs the compiled mocha tests in
// out/tests/test/e2e/ against that page, as a person would use it. Screenshots land in
// test-output/screenshots/. Exit code: 0 when every test passed.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import Mocha from 'mocha';
import { launchBrowser } from './browser.mjs';
import { installExtension, makeSandbox, removeSandbox, startCodeServer } from './codeServer.mjs';
import { HOST_ENV, prepareWorkspace } from './fixtures.mjs';
import { venvPython } from './tinyPolicy.mjs';
import { assertVscodeToolsInstalled, compiledTestsDir, repoRoot, testOutputDir } from './paths.mjs';

const require = createRequire(import.meta.url);
const screenshotDir = path.join(testOutputDir, 'screenshots');
const vsixPath = path.join(testOutputDir, 'empo2-studio.vsix');

function packageExtension() {
  rmSync(vsixPath, { force: true });
  // vsce runs vscode:prepublish (the production build): the tier tests what users would install.
  execFileSync(
    process.execPath,
    [require.resolve('@vscode/vsce/vsce'), 'package', '--no-dependencies', '--out', vsixPath],
    {
      cwd: repoRoot,
      stdio: ['ignore', 'ignore', 'inherit'],
    },
  );
}

async function openWorkbench(page, server, sandbox) {
  await page.goto(`${server.url}/?folder=${encodeURIComponent(sandbox.workspace)}`);
  await page.locator('.monaco-workbench .part.activitybar').waitFor({ timeout: 60_000 });
  // The extension activates on startup finished; its status bar item says it is up.
  await page.locator('.part.statusbar .statusbar-item').filter({ hasText: 'EMPO²' }).waitFor({ timeout: 60_000 });
}

async function runMocha(page) {
  const SummaryReporter = require(path.join(compiledTestsDir, 'harness', 'summaryReporter.js'));
  const mocha = new Mocha({
    reporter: SummaryReporter,
    timeout: 180_000,
    grep: process.env.EMPO2_TEST_GREP || undefined,
    rootHooks: {
      async afterEach() {
        if (this.currentTest?.state === 'failed') {
          const name = this.currentTest
            .fullTitle()
            .replace(/[^A-Za-z0-9]+/g, '-')
            .slice(0, 80);
          await page.screenshot({ path: path.join(screenshotDir, `FAILED-${name}.png`) }).catch(() => undefined);
        }
      },
    },
  });
  const dir = path.join(compiledTestsDir, 'e2e');
  // EMPO2_E2E_FILES: comma-separated prefixes of the files to run (scripts/stress-tests.sh runs
  // 07-flaky-link alone); default every file.
  const only = (process.env.EMPO2_E2E_FILES || '').split(',').filter(Boolean);
  const wanted = (name) => only.length === 0 || only.some((prefix) => name.startsWith(prefix));
  for (const file of readdirSync(dir)
    .filter((name) => name.endsWith('.e2e.test.js') && wanted(name))
    .sort()) {
    mocha.addFile(path.join(dir, file));
  }
  await mocha.loadFilesAsync();
  return new Promise((resolve) => mocha.run(resolve));
}

async function main() {
  assertVscodeToolsInstalled();
  if (!existsSync(path.join(compiledTestsDir, 'e2e'))) {
    throw new Error('the tests are not built; run npm run build:tests');
  }
  mkdirSync(screenshotDir, { recursive: true });
  for (const old of readdirSync(screenshotDir).filter((name) => !name.startsWith('integration'))) {
    rmSync(path.join(screenshotDir, old));
  }
  packageExtension();

  // The installed .vsix has no virtual environment of its own: point it at the project's.
  const sandbox = makeSandbox('e2e', { 'empo2.pythonPath': venvPython });
  // A run root holding the synthetic runs (10,000 episodes; 100,000 iterations of metrics) and a
  // config file for a three-iteration run of the tiny policy.
  const fixtures = prepareWorkspace(sandbox.workspace, { iterations: 3 });
  await installExtension(sandbox, vsixPath);
  const server = await startCodeServer({
    sandbox,
    env: HOST_ENV,
    logFile: path.join(testOutputDir, 'logs', 'code-server-e2e.log'),
  });
  const { browser, page } = await launchBrowser();
  const consoleMessages = [];
  page.on('console', (message) => consoleMessages.push(`[${message.type()}] ${message.text()}`));
  try {
    await openWorkbench(page, server, sandbox);
    const measurements = {};
    globalThis.__empo2E2E = {
      page,
      url: server.url,
      workspace: sandbox.workspace,
      screenshotDir,
      consoleMessages,
      fixtures,
      measurements,
    };
    try {
      return await runMocha(page);
    } finally {
      writeFileSync(path.join(testOutputDir, 'measurements-e2e.json'), JSON.stringify(measurements, null, 2) + '\n');
    }
  } finally {
    writeFileSync(path.join(testOutputDir, 'logs', 'e2e-browser-console.log'), consoleMessages.join('\n') + '\n');
    await browser.close();
    await server.stop();
    removeSandbox(sandbox);
  }
}

try {
  const failures = await main();
  process.exitCode = failures === 0 ? 0 : 1;
} catch (error) {
  console.error(`e2e tier: ${error instanceof Error ? error.message : error}`);
  process.exitCode = 1;
}
