// Integration tier: runs the compiled mocha suite (out/tests/test/integration/index.js) inside
// code-server's real extension host, with this repository as the extension under development.
//
// How: code-server with the smoke-test driver, a headless Chromium that opens the workbench with
// a `payload` naming extensionDevelopmentPath and extensionTestsPath, and the workbench calling
// window.codeAutomationExit(code) when the test extension host ends. The suite's reporter writes
// its output and counts to files (nobody reads the extension host's stdout here), which this
// script prints. Exit code: the suite's.
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { launchBrowser } from './browser.mjs';
import { makeSandbox, removeSandbox, startCodeServer, tail } from './codeServer.mjs';
import { HOST_ENV, prepareWorkspace } from './fixtures.mjs';
import { assertVscodeToolsInstalled, compiledTestsDir, repoRoot, testOutputDir } from './paths.mjs';

const SUITE_TIMEOUT_MS = 6 * 60_000;

export async function runIntegrationTier({ summaryFile, logFile }) {
  assertVscodeToolsInstalled();
  const suiteIndex = path.join(compiledTestsDir, 'integration', 'index.js');
  if (!existsSync(suiteIndex) || !existsSync(path.join(repoRoot, 'out', 'extension.js'))) {
    throw new Error('the extension or its tests are not built; run npm run build && npm run build:tests');
  }
  rmSync(summaryFile, { force: true });
  rmSync(logFile, { force: true });

  const sandbox = makeSandbox('integration');
  // The extension under development is this repository, so it finds the project .venv itself.
  const fixtures = prepareWorkspace(sandbox.workspace, { metricsIterations: 0 });
  const server = await startCodeServer({
    sandbox,
    smokeTestDriver: true,
    logFile: path.join(testOutputDir, 'logs', 'code-server-integration.log'),
    // The extension host inherits code-server's environment: that is how these reach the suite.
    env: {
      ...HOST_ENV,
      EMPO2_TEST_SUMMARY: summaryFile,
      EMPO2_TEST_LOG: logFile,
      EMPO2_TEST_GREP: process.env.EMPO2_TEST_GREP ?? '',
      EMPO2_TEST_CONFIG: fixtures.configFile,
      EMPO2_TEST_BIG_RUN: fixtures.bigRun,
      EMPO2_TEST_BIG_EPISODES: String(fixtures.bigEpisodes),
      EMPO2_TEST_MEASUREMENTS: path.join(testOutputDir, 'measurements-integration.json'),
    },
  });
  const { browser, page } = await launchBrowser();
  const consoleLines = [];
  page.on('console', (message) => consoleLines.push(`[${message.type()}] ${message.text()}`));
  try {
    const exited = new Promise((resolve) => {
      page.exposeFunction('codeAutomationExit', (code) => resolve(Number(code)));
    });
    const remote = (file) => `vscode-remote://127.0.0.1:${server.port}${file}`;
    const payload = [
      ['extensionDevelopmentPath', remote(repoRoot)],
      ['extensionTestsPath', remote(suiteIndex)],
    ];
    const url = `${server.url}/?folder=${encodeURIComponent(sandbox.workspace)}&payload=${encodeURIComponent(JSON.stringify(payload))}`;
    await page.goto(url);
    let timer;
    const code = await Promise.race([
      exited,
      new Promise((resolve) => (timer = setTimeout(() => resolve('timeout'), SUITE_TIMEOUT_MS))),
    ]);
    clearTimeout(timer);
    if (code === 'timeout') {
      await page.screenshot({ path: path.join(testOutputDir, 'screenshots', 'integration-timeout.png') });
      throw new Error(`the integration suite did not finish within ${SUITE_TIMEOUT_MS / 1000} s`);
    }
    return code;
  } finally {
    writeFileSync(path.join(testOutputDir, 'logs', 'integration-browser-console.log'), consoleLines.join('\n') + '\n');
    await browser.close();
    await server.stop();
    removeSandbox(sandbox);
  }
}

async function main() {
  const summaryFile = process.env.EMPO2_TEST_SUMMARY || path.join(testOutputDir, 'integration-summary.json');
  const logFile = path.join(testOutputDir, 'logs', 'integration-mocha.log');
  let code;
  try {
    code = await runIntegrationTier({ summaryFile, logFile });
  } catch (error) {
    console.error(`integration tier: ${error instanceof Error ? error.message : error}`);
    code = 1;
  }
  if (existsSync(logFile)) {
    process.stdout.write(readFileSync(logFile, 'utf8'));
  } else {
    console.error("integration tier: the suite printed nothing; last lines of code-server's log:");
    console.error(tail(path.join(testOutputDir, 'logs', 'code-server-integration.log')));
  }
  process.exitCode = code === 0 && existsSync(summaryFile) ? 0 : 1;
}

await main();
