// Writes synthetic run folders in the host's own format (docs/run-folder.md,
// host/empo2/run_folder/folder.py), for tests that need a run bigger than a CPU trains in minutes:
//   writeTrajectoryRun   10,000+ episodes (paper batch: 16 tasks × 8 rollouts per iteration), each
//                        with full steps, so `run.open` then trajectory.list/get work as on a real run;
//   writeMetricsRun      100,000 iterations of metrics.jsonl (the charts' stress test);
//   writeBranchedRun     a run under a default-looking id with a one-iteration branch, and a
//                        masked-token fraction that differs by float noise (how a tree and a
//                        chart read at a glance).
// Deterministic (a seeded generator), and fast (~1 s on 2 cores). Usage from a shell:
//   node test/harness/syntheticRun.mjs <run-root> [episodes] [metrics-iterations]
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const TASKS = ['power-device', 'grow-plant', 'heat-food'];
const ACTIONS = [
  'look around',
  'go to kitchen',
  'go to shed',
  'open locker',
  'take bulb',
  'focus on lamp',
  'go to hallway',
];

function generator(seed) {
  let state = seed >>> 0;
  return () => {
    state = (state * 1664525 + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

function baseConfig(name, root, iterations, tasksPerBatch, groupSize) {
  return {
    name,
    root,
    iterations,
    seed: 0,
    env: { name: 'builtin', tasks: TASKS, max_steps: 15, train_variations: [], test_variations: [] },
    policy: { model: 'builtin' },
    algo: { batch_tasks: tasksPerBatch, group_size: groupSize, p_memory: 0.25, q_off_policy: 2 / 3 },
    eval: { every: 10, max_variations: 2, episodes_per_variation: 1 },
    synthetic: true,
  };
}

function writeRunJson(folder, state, iteration) {
  writeFileSync(
    path.join(folder, 'run.json'),
    JSON.stringify({ state, iteration, updated: 1_790_000_000 + iteration }, null, 2) + '\n',
  );
}

export function episodeId(iteration, index) {
  return `i${String(iteration).padStart(6, '0')}-e${String(index).padStart(4, '0')}`;
}

/**
 * A finished run of ceil(episodes / (tasks × rollouts)) iterations; returns its folder and the
 * number of episodes written.
 */
export function writeTrajectoryRun(
  root,
  { name = 'synthetic-10k', episodes = 10_000, tasksPerBatch = 16, groupSize = 8, steps = 3 } = {},
) {
  const folder = path.join(root, name);
  const perIteration = tasksPerBatch * groupSize;
  const iterations = Math.ceil(episodes / perIteration);
  mkdirSync(path.join(folder, 'trajectories'), { recursive: true });
  mkdirSync(path.join(folder, 'memory'), { recursive: true });
  writeFileSync(
    path.join(folder, 'config.json'),
    JSON.stringify(baseConfig(name, root, iterations, tasksPerBatch, groupSize), null, 2) + '\n',
  );
  const random = generator(42);
  const index = [];
  const metrics = [];
  for (let iteration = 1; iteration <= iterations; iteration++) {
    const memory = random() < 0.25;
    const rolloutMode = memory ? 'memory' : 'memory-free';
    const metricMode = memory ? 'memory' : 'memory_free'; // metrics.jsonl spells it so
    const updateMode = memory ? (random() < 2 / 3 ? 'off-policy' : 'on-policy-with-tips') : 'on-policy';
    const lines = [];
    let returns = 0;
    for (let e = 0; e < perIteration; e++) {
      const group = Math.floor(e / groupSize);
      const task = TASKS[group % TASKS.length];
      const variation = group % 5;
      const success = random() < Math.min(0.9, 0.05 + iteration / iterations);
      const ret = success ? 1 : Math.round(random() * 50) / 100;
      returns += ret;
      const id = episodeId(iteration, e);
      const stepRecords = [];
      for (let t = 0; t < steps; t++) {
        const action = ACTIONS[Math.floor(random() * ACTIONS.length)];
        const tips = memory && t === 0 ? [`open the shed before the kitchen (${task}/${variation})`] : [];
        const observation = `you are in the ${t % 2 ? 'kitchen' : 'hallway'} . here : a closed locker . exits : kitchen , shed .`;
        stepRecords.push({
          t,
          observation,
          prompt: `task : ${task} . now : ${observation}${tips.length ? ` <tip> ${tips[0]} </tip>` : ''}`,
          prompt_no_tips: `task : ${task} . now : ${observation}`,
          tips,
          tip_ids: tips.map(() => 't000001'),
          action,
          executed_action: action,
          action_ids: [5, 6],
          behaviour_logprobs: [-0.5, -0.25],
          reward: t === steps - 1 && success ? 1 : 0,
          intrinsic: 1 / (t + 1),
          score: t === steps - 1 ? ret : 0,
          next_observation: observation,
        });
      }
      const summary = {
        id,
        iteration,
        task,
        variation,
        group,
        rollout_mode: rolloutMode,
        update_mode: updateMode,
        return: ret,
        success,
        steps,
        intrinsic: 0.5,
        tip_id: null,
      };
      index.push(JSON.stringify(summary));
      lines.push(
        JSON.stringify({
          ...summary,
          steps: stepRecords,
          description: `a synthetic ${task} task, variation ${variation} .`,
          tip: null,
        }),
      );
    }
    writeFileSync(
      path.join(folder, 'trajectories', `iter-${String(iteration).padStart(6, '0')}.jsonl`),
      lines.join('\n') + '\n',
    );
    metrics.push(
      JSON.stringify({
        iteration,
        time: 1_790_000_000 + iteration,
        rollout_mode: rolloutMode,
        update_mode: updateMode,
        'rollout/return': returns / perIteration,
        [`rollout/${metricMode}/return`]: returns / perIteration,
        'rollout/success': returns / perIteration,
        'memory/tips': iteration * perIteration,
      }),
    );
  }
  writeFileSync(path.join(folder, 'trajectories', 'index.jsonl'), index.join('\n') + '\n');
  writeFileSync(path.join(folder, 'metrics.jsonl'), metrics.join('\n') + '\n');
  writeRunJson(folder, 'finished', iterations);
  return { folder, episodes: iterations * perIteration, iterations };
}

/** A finished run with `iterations` lines of metrics (every chart's keys), and no episodes. */
export function writeMetricsRun(root, { name = 'synthetic-100k-metrics', iterations = 100_000 } = {}) {
  const folder = path.join(root, name);
  mkdirSync(folder, { recursive: true });
  writeFileSync(
    path.join(folder, 'config.json'),
    JSON.stringify(baseConfig(name, root, iterations, 4, 8), null, 2) + '\n',
  );
  const random = generator(7);
  const round = (x) => Math.round(x * 1e4) / 1e4;
  const lines = new Array(iterations);
  for (let i = 1; i <= iterations; i++) {
    const progress = i / iterations;
    const memory = random() < 0.25;
    const ret = round(0.1 + 0.8 * progress + 0.1 * Math.sin(i / 50) + 0.05 * random());
    const record = {
      iteration: i,
      rollout_mode: memory ? 'memory' : 'memory-free',
      'rollout/return': ret,
      [`rollout/${memory ? 'memory' : 'memory_free'}/return`]: ret,
      'rollout/success': round(Math.min(1, progress + 0.1 * random())),
      'update/masked_fraction': round(0.3 * (1 - progress) + 0.02 * random()),
      'update/ratio_mean': round(1 + 0.02 * (random() - 0.5)),
      'update/clip_fraction': round(0.05 + 0.02 * random()),
      'update/entropy': round(3 - 2 * progress + 0.1 * random()),
      'update/approx_kl_old': round(0.01 * random()),
      'memory/tips': Math.min(1000, Math.floor(i / 10)),
      'reward/intrinsic': round(0.5 * (1 - progress) + 0.05 * random()),
      'throughput/rollout_tokens_per_s': Math.round(900 + 100 * random()),
    };
    if (i % 10 === 0) {
      record['eval/memory_free/success'] = round(progress);
      record['eval/memory/success'] = round(Math.min(1, progress + 0.1));
    }
    lines[i - 1] = JSON.stringify(record);
  }
  writeFileSync(path.join(folder, 'metrics.jsonl'), lines.join('\n') + '\n');
  writeRunJson(folder, 'finished', iterations);
  return { folder, iterations };
}

/**
 * A finished run named as the editor names one (`builtin-<date>-<time>`) whose masked-token
 * fraction differs by 1e-11 from one iteration to the next (float noise), and a branch of it at
 * checkpoint `iterations - 1` with one rerun iteration of its own, as `empo2-host rerun` leaves it.
 */
export function writeBranchedRun(root, { name = 'builtin-20261204-212233', iterations = 14 } = {}) {
  const parent = writeTrajectoryRun(root, { name, episodes: iterations * 32, tasksPerBatch: 4, groupSize: 8 });
  const noisy = (line, i) => ({
    ...JSON.parse(line),
    env_steps: (i + 1) * 96,
    'update/masked_fraction': 0.012345678900233 + (i % 2) * 1e-11,
  });
  const records = readFileSync(path.join(parent.folder, 'metrics.jsonl'), 'utf8').trim().split('\n').map(noisy);
  writeFileSync(path.join(parent.folder, 'metrics.jsonl'), records.map((r) => JSON.stringify(r)).join('\n') + '\n');
  const checkpoint = iterations - 1;
  const branchName = `${name}-branch-1`;
  const folder = path.join(root, branchName);
  mkdirSync(folder, { recursive: true });
  const config = JSON.parse(readFileSync(path.join(parent.folder, 'config.json'), 'utf8'));
  writeFileSync(path.join(folder, 'config.json'), JSON.stringify({ ...config, name: branchName }, null, 2) + '\n');
  writeFileSync(
    path.join(folder, 'parent.json'),
    JSON.stringify(
      {
        run: name,
        path: parent.folder,
        checkpoint,
        memory_marker: null,
        memory_version: 0,
        tip_edits: [],
        created: 1_790_000_100,
        adopted: null,
      },
      null,
      2,
    ) + '\n',
  );
  const before = records[checkpoint - 1];
  const rerun = {
    ...before,
    iteration: checkpoint + 1,
    env_steps: before.env_steps + 96,
    update_mode: 'off-policy',
    'rollout/return': before['rollout/return'] + 0.2,
  };
  writeFileSync(path.join(folder, 'metrics.jsonl'), JSON.stringify(rerun) + '\n');
  writeRunJson(folder, 'finished', checkpoint + 1);
  return { parent: parent.folder, branch: folder, checkpoint };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [root, episodes = '10000', iterations = '100000'] = process.argv.slice(2);
  if (!root) {
    console.error('usage: node test/harness/syntheticRun.mjs <run-root> [episodes] [metrics-iterations]');
    process.exit(2);
  }
  const started = Date.now();
  const trajectories = writeTrajectoryRun(root, { episodes: Number(episodes) });
  const metrics = writeMetricsRun(root, { iterations: Number(iterations) });
  console.log(
    `${trajectories.folder}: ${trajectories.episodes} episodes; ${metrics.folder}: ${metrics.iterations} iterations (${Date.now() - started} ms)`,
  );
}
