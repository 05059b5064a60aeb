// `npm test`: runs the test tiers one after another and sums them up.
//   unit         mocha in plain Node                       out/tests/test/unit/*.unit.test.js
//   integration  mocha inside code-server's extension host test/harness/runIntegration.mjs
//   e2e          Playwright + Chromium against code-server test/harness/runE2e.mjs
// Usage: node test/harness/runTiers.mjs [unit] [integration] [e2e]   (default: all three)
// Expects the extension and tests built (npm test's pretest does that). Ends with the line
// "N passed, N failed" and exits non-zero when any test failed or any tier did not report.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { compiledTestsDir, repoRoot, testOutputDir } from './paths.mjs';
import { tinyPolicy } from './tinyPolicy.mjs';

const require = createRequire(import.meta.url);
const reporter = path.join(compiledTestsDir, 'harness', 'summaryReporter.js');

const TIERS = {
  unit: () => [
    require.resolve('mocha/bin/mocha.js'),
    '--reporter',
    reporter,
    '--timeout',
    '10000',
    path.join(compiledTestsDir, 'unit', '**', '*.unit.test.js'),
  ],
  integration: () => [path.join(repoRoot, 'test', 'harness', 'runIntegration.mjs')],
  e2e: () => [path.join(repoRoot, 'test', 'harness', 'runE2e.mjs')],
};

const requested = process.argv.slice(2);
const unknown = requested.filter((tier) => !(tier in TIERS));
if (unknown.length > 0) {
  console.error(`unknown tier(s): ${unknown.join(', ')}; choose from ${Object.keys(TIERS).join(', ')}`);
  process.exit(2);
}
if (!existsSync(reporter)) {
  console.error('the tests are not built; run npm run build && npm run build:tests (npm test does both)');
  process.exit(2);
}

mkdirSync(testOutputDir, { recursive: true });
const tiers = requested.length > 0 ? requested : Object.keys(TIERS);
if ((tiers.includes('integration') || tiers.includes('e2e')) && !process.env.EMPO2_TEST_POLICY) {
  // Both tiers train the tiny built-in policy; find (or build) it once.
  const started = Date.now();
  try {
    process.env.EMPO2_TEST_POLICY = tinyPolicy();
    console.log(`tiny policy: ${process.env.EMPO2_TEST_POLICY} (${((Date.now() - started) / 1000).toFixed(1)} s)`);
  } catch (error) {
    console.error(`cannot build the tiny policy the tests train: ${error instanceof Error ? error.message : error}`);
  }
}
const results = [];
for (const tier of tiers) {
  const summaryFile = path.join(testOutputDir, `${tier}-summary.json`);
  rmSync(summaryFile, { force: true });
  console.log(`\n=== ${tier} tests ===`);
  const started = Date.now();
  const run = spawnSync(process.execPath, TIERS[tier](), {
    cwd: repoRoot,
    stdio: ['ignore', 'inherit', 'inherit'],
    env: { ...process.env, EMPO2_TEST_SUMMARY: summaryFile },
  });
  const seconds = (Date.now() - started) / 1000;
  const summary = existsSync(summaryFile) ? JSON.parse(readFileSync(summaryFile, 'utf8')) : undefined;
  let { passes = 0, failures = 0, pending = 0 } = summary ?? {};
  let note = '';
  if (!summary) {
    failures += 1;
    note = 'reported no results';
  } else if (run.status !== 0 && failures === 0) {
    failures += 1;
    note = `exited ${run.status ?? run.signal} after its tests passed`;
  } else if (passes + failures === 0) {
    failures += 1;
    note = 'ran no tests';
  }
  results.push({ tier, passes, failures, pending, seconds, note });
  // The tier's file now holds what this runner concluded too (scripts/test.sh reads it).
  writeFileSync(summaryFile, JSON.stringify({ ...summary, passes, failures, pending, seconds, note }));
}

console.log('\n=== summary ===');
for (const { tier, passes, failures, pending, seconds, note } of results) {
  const counts = `${passes} passed, ${failures} failed${pending ? `, ${pending} pending` : ''}`;
  console.log(
    `${tier.padEnd(12)} ${counts.padEnd(28)} ${seconds.toFixed(1).padStart(6)} s${note ? `  (${note})` : ''}`,
  );
}
const passed = results.reduce((sum, r) => sum + r.passes, 0);
const failed = results.reduce((sum, r) => sum + r.failures, 0);
console.log(`${passed} passed, ${failed} failed`);
process.exitCode = failed === 0 ? 0 : 1;
