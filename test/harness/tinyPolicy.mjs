// The tiny built-in policy the tests train (a real Qwen2 model, built and warm-started by the
// host's own builder with fewer demonstrations; ~1 minute the first time, then cached in
// $EMPO2_CACHE_DIR/policies by the host) and the fast run config that uses it: 2 tasks × 2
// rollouts of 5-step episodes (host/tests/conftest.py `tiny_run_overrides`).
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { repoRoot } from './paths.mjs';

export const venvPython = path.join(repoRoot, '.venv', 'bin', 'python');

const BUILD = `
from empo2.policy.builtin import BuiltinRecipe, ensure_builtin_policy
print(ensure_builtin_policy(BuiltinRecipe(size="tiny", epochs=1, seed=0,
      episodes={"habit": 30, "stuck": 20, "wander": 10, "tip-success": 20, "tip-failure": 20})))
`;

/** The tiny policy's folder, built on first use. */
export function tinyPolicy() {
  if (!existsSync(venvPython)) {
    throw new Error(`no host in ${venvPython}; run scripts/setup-host.sh first`);
  }
  const out = execFileSync(venvPython, ['-c', BUILD], {
    env: { ...process.env, HF_HUB_OFFLINE: '1', TRANSFORMERS_OFFLINE: '1', EMPO2_NO_PROGRESS: '1' },
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return out.trim().split('\n').pop();
}

/** A config object for a short run on the tiny policy. */
export function tinyRunConfig(policy, overrides = {}) {
  return {
    iterations: 2,
    env: { tasks: ['power-device', 'grow-plant'], max_steps: 5 },
    policy: { model: policy, max_action_tokens: 6, max_tip_tokens: 12 },
    algo: { batch_tasks: 2, group_size: 2, p_memory: 1.0, q_off_policy: 1.0, minibatches: 2 },
    eval: { every: 0, max_variations: 1 },
    ...overrides,
  };
}
