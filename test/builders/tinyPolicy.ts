import * as path from 'node:path';

const repoRoot = path.resolve(__dirname, '../../../..');

/**
 * The tiny built-in policy the tests train, debug and score: the one the harness passes
 * (EMPO2_TEST_POLICY), else the one test/harness/tinyPolicy.mjs builds (once, then cached).
 */
export async function tinyPolicyFolder(): Promise<string> {
  const harness = (await import(path.join(repoRoot, 'test', 'harness', 'tinyPolicy.mjs'))) as { tinyPolicy(): string };
  return process.env.EMPO2_TEST_POLICY || harness.tinyPolicy();
}
