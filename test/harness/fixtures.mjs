// What the integration and end-to-end tiers put in front of the extension: the tiny policy and
// a config that trains it in seconds, and synthetic run folders too big to train here (10,000
// episodes; 100,000 iterations of metrics), all under the sandbox workspace's run root.
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { writeMetricsRun, writeTrajectoryRun } from './syntheticRun.mjs';
import { tinyPolicy, tinyRunConfig, venvPython } from './tinyPolicy.mjs';

/** Environment for code-server (and so the extension host and the Python host it spawns). */
export const HOST_ENV = {
  HF_HUB_OFFLINE: '1',
  TRANSFORMERS_OFFLINE: '1',
  EMPO2_NO_PROGRESS: '1',
  TOKENIZERS_PARALLELISM: 'false',
};

export function prepareWorkspace(workspace, { metricsIterations = 100_000, iterations = 2 } = {}) {
  const started = Date.now();
  // runTiers.mjs finds the policy once for both tiers (loading torch to ask costs seconds).
  const policy = process.env.EMPO2_TEST_POLICY || tinyPolicy();
  const runRoot = path.join(workspace, '.empo2', 'runs');
  mkdirSync(runRoot, { recursive: true });
  const configs = path.join(workspace, '.empo2', 'configs');
  mkdirSync(configs, { recursive: true });
  const configFile = path.join(configs, 'tiny.json');
  writeFileSync(configFile, JSON.stringify(tinyRunConfig(policy, { iterations }), null, 2) + '\n');
  const big = writeTrajectoryRun(runRoot, { episodes: 10_000 });
  const metrics = metricsIterations ? writeMetricsRun(runRoot, { iterations: metricsIterations }) : undefined;
  console.log(
    `fixtures: tiny policy, ${big.episodes}-episode run${metrics ? `, ${metrics.iterations}-iteration metrics run` : ''} (${((Date.now() - started) / 1000).toFixed(1)} s)`,
  );
  return {
    policy,
    runRoot,
    configFile,
    bigRun: big.folder,
    bigEpisodes: big.episodes,
    metricsRun: metrics?.folder,
    python: venvPython,
  };
}
