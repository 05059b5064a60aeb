// The integration suite under @vscode/test-electron, for machines that can download VS Code
// (this one cannot: its update service is unreachable; there test/harness/runIntegration.mjs runs
// the same suite inside code-server). Usage: npm run test:electron [-- <vscode version>]
// The default version is the oldest the extension supports (engines.vscode).
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { runTests } from '@vscode/test-electron';
import { HOST_ENV, prepareWorkspace } from './fixtures.mjs';
import { compiledTestsDir, repoRoot, testOutputDir } from './paths.mjs';

const version = process.argv[2] ?? '1.95.0';
const workspace = mkdtempSync(path.join(os.tmpdir(), 'empo2-electron-'));
try {
  // The same fixtures as in code-server: the tiny policy's config, a 10,000-episode run.
  const fixtures = prepareWorkspace(workspace, { metricsIterations: 0 });
  await runTests({
    version,
    extensionDevelopmentPath: repoRoot,
    extensionTestsPath: path.join(compiledTestsDir, 'integration', 'index.js'),
    extensionTestsEnv: {
      ...HOST_ENV,
      EMPO2_TEST_CONFIG: fixtures.configFile,
      EMPO2_TEST_BIG_RUN: fixtures.bigRun,
      EMPO2_TEST_BIG_EPISODES: String(fixtures.bigEpisodes),
      EMPO2_TEST_MEASUREMENTS: path.join(testOutputDir, 'measurements-electron.json'),
    },
    launchArgs: [
      workspace,
      '--disable-extensions',
      '--disable-workspace-trust',
      '--skip-welcome',
      '--skip-release-notes',
    ],
  });
} catch (error) {
  console.error(`integration tests under VS Code ${version} failed: ${error instanceof Error ? error.message : error}`);
  process.exitCode = 1;
} finally {
  rmSync(workspace, { recursive: true, force: true });
}
