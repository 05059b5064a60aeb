import * as assert from 'node:assert/strict';
import { newRunObstacle, STOP_AND_START } from '../../src/runs/newRunObstacle';
import { isRunConfigText } from '../../src/runs/runConfigFiles';
import {
  describeChoice,
  formatOverrides,
  parseOverrides,
  parseRunConfigurations,
  RUN_CONFIGURATIONS_FILE,
  startParams,
  withConfiguration,
} from '../../src/runs/runConfigurations';
import type { RunInfo } from '../../src/rpc/protocol';
import type { RunEntry } from '../../src/runs/runsModel';
import { aRunInfo } from '../builders/protocol';

// "New Training Run": what it says when a run is in the way, and which files it offers.

function aLiveRun(state: RunInfo['state'], live = true): RunEntry {
  return {
    info: aRunInfo({ runId: 'builtin-1', state, live, iteration: 5, iterations: 40 }),
    progress: null,
    latestMetrics: null,
    trajectoryIteration: 5,
    config: undefined,
  };
}

describe('what stands in the way of a new run, said before its first question', () => {
  it('starts at once while no run is live', () => {
    assert.equal(newRunObstacle(undefined), undefined);
    assert.equal(newRunObstacle(aLiveRun('interrupted', false)), undefined);
    assert.equal(newRunObstacle(aLiveRun('finished', false)), undefined);
  });

  it("asks to stop a paused run, not to pause it (a paused run keeps the host's one slot)", () => {
    const obstacle = newRunObstacle(aLiveRun('paused'))!;
    assert.equal(
      obstacle.message,
      'builtin-1 is paused. The host trains one run at a time, and a paused run keeps its place: stop builtin-1 to start a new run.',
    );
    assert.ok(obstacle.canStop);
    assert.match(obstacle.detail, new RegExp(`^"${STOP_AND_START}" stops builtin-1`));
    assert.doesNotMatch(obstacle.message + obstacle.detail, /pause it|pause or stop/);
  });

  it('asks to stop a training run, and only waits for one already stopping', () => {
    assert.match(
      newRunObstacle(aLiveRun('running'))!.message,
      /^builtin-1 is training\. .*stop builtin-1 to start a new run\.$/,
    );
    assert.ok(newRunObstacle(aLiveRun('pausing'))!.canStop);
    assert.equal(newRunObstacle(aLiveRun('stopping'))!.canStop, false);
  });
});

describe('which files New Training Run offers as run configurations', () => {
  const fields = ['name', 'root', 'seed', 'iterations', 'env', 'policy', 'algo', 'memory', 'eval'];

  it('offers a JSON object whose keys are all config fields', () => {
    assert.ok(isRunConfigText(JSON.stringify({ iterations: 3, algo: { p_memory: 0 } }), fields));
    assert.ok(isRunConfigText('{"seed": 1}', undefined), 'a host that does not name its fields: any object');
  });

  it('leaves out a bench probe, a build manifest, a list, an empty object and broken JSON', () => {
    const probe = {
      run: 'empo2-per-episode-key-seed50',
      iterations: 100,
      episodes: 798,
      keys: { step: { entries: 3006 } },
    };
    assert.equal(isRunConfigText(JSON.stringify(probe), fields), false);
    assert.equal(isRunConfigText(JSON.stringify({ recipe: 'builtin', sha256: 'aa' }), fields), false);
    assert.equal(isRunConfigText('[{"seed": 1}]', fields), false);
    assert.equal(isRunConfigText('{}', fields), false);
    assert.equal(isRunConfigText('{"seed": 1', fields), false);
  });
});

describe("what New Training Run asks for becomes run.start's params", () => {
  const choice = {
    env: 'builtin',
    model: 'smollm2-135m-instruct',
    preset: 'builtin-smoke',
    overrides: ['iterations=1'],
  };

  it("sends the preset, then the environment and the model as overrides, then the person's, which win", () => {
    assert.deepEqual(startParams(choice), {
      preset: 'builtin-smoke',
      overrides: ['env.name=builtin', 'policy.model=smollm2-135m-instruct', 'iterations=1'],
    });
    assert.deepEqual(startParams({ ...choice, env: 'openenv:http://localhost:8000/?a=b', overrides: [] }).overrides, [
      'env.name=openenv:http://localhost:8000/?a=b',
      'policy.model=smollm2-135m-instruct',
    ]);
  });

  it('reads overrides typed as in a terminal: spaces separate, quotes keep spaces and go', () => {
    assert.deepEqual(parseOverrides('  iterations=5   algo.p_memory=0.5 '), {
      overrides: ['iterations=5', 'algo.p_memory=0.5'],
    });
    assert.deepEqual(parseOverrides(''), { overrides: [] });
    assert.deepEqual(parseOverrides(`'env.tasks=["a", "b"]' policy.model="/data/my model"`), {
      overrides: ['env.tasks=["a", "b"]', 'policy.model=/data/my model'],
    });
    assert.deepEqual(
      parseOverrides('iterations'),
      { overrides: ['iterations'] },
      "whether a part is key=value is the host's to say",
    );
    assert.deepEqual(parseOverrides('name="unclosed'), { problem: 'A quote (") is opened and not closed.' });
  });

  it('writes overrides back so that they read the same', () => {
    const overrides = ['iterations=5', 'env.tasks=["a", "b"]', "name=it's", 'policy.model=/data/my model'];
    const text = formatOverrides(overrides);
    assert.equal(text, `iterations=5 'env.tasks=["a", "b"]' "name=it's" 'policy.model=/data/my model'`);
    assert.deepEqual(parseOverrides(text), { overrides });
  });

  it('says a choice in one line', () => {
    assert.equal(describeChoice(choice), 'builtin · smollm2-135m-instruct · builtin-smoke · iterations=1');
    assert.equal(describeChoice({ ...choice, overrides: [] }), 'builtin · smollm2-135m-instruct · builtin-smoke');
  });
});

describe('the run configurations saved in the workspace (.vscode/empo2-runs.json)', () => {
  const smoke = {
    name: 'smoke',
    env: 'builtin',
    model: 'builtin',
    preset: 'builtin-smoke',
    overrides: ['iterations=1'],
  };
  const file = (configurations: unknown[], extra: object = {}) =>
    JSON.stringify({ version: 1, ...extra, configurations });

  it('reads the configurations, an entry without overrides having none', () => {
    const { overrides: _, ...bare } = smoke;
    assert.deepEqual(parseRunConfigurations(file([smoke, { ...bare, name: 'bare' }])), {
      configurations: [smoke, { ...bare, name: 'bare', overrides: [] }],
    });
  });

  it('refuses a file that does not read, in one sentence naming the file and what to fix', () => {
    const problem = (text: string) => {
      const parsed = parseRunConfigurations(text);
      assert.ok('problem' in parsed, text);
      assert.match(
        parsed.problem,
        new RegExp(`^(The configuration \\d of )?${RUN_CONFIGURATIONS_FILE.replace('.', '\\.')}`),
        parsed.problem,
      );
      return parsed.problem;
    };
    assert.match(problem('{"version": 1, "configurations": ['), /is not valid JSON/);
    assert.match(problem('[]'), /does not hold a JSON object/);
    assert.equal(
      problem(file([], { version: 2 })),
      `${RUN_CONFIGURATIONS_FILE} has "version": 2, and this extension reads version 1.`,
    );
    assert.equal(
      problem(JSON.stringify({ configurations: [] })),
      `${RUN_CONFIGURATIONS_FILE} has no "version", and this extension reads version 1.`,
    );
    assert.match(problem(JSON.stringify({ version: 1 })), /has no "configurations" list/);
    assert.equal(
      problem(file([smoke, 'x'])),
      `The configuration 2 of ${RUN_CONFIGURATIONS_FILE} is not a JSON object.`,
    );
    assert.equal(
      problem(file([{ ...smoke, preset: '' }])),
      `The configuration 1 of ${RUN_CONFIGURATIONS_FILE} ("smoke") needs "preset", a non-empty string.`,
    );
    assert.equal(
      problem(file([{ ...smoke, model: 3 }])),
      `The configuration 1 of ${RUN_CONFIGURATIONS_FILE} ("smoke") needs "model", a non-empty string.`,
    );
    assert.match(problem(file([{ ...smoke, overrides: 'iterations=1' }])), /"overrides" that are not a list/);
    assert.match(
      problem(file([{ ...smoke, overide: [] }])),
      /unknown key "overide" \(its keys: name, env, model, preset, overrides\)/,
    );
    assert.match(problem(file([smoke, smoke])), /two configurations named "smoke"/);
  });

  it('saves a first configuration into a new file, in the format it reads', () => {
    const saved = withConfiguration(undefined, smoke);
    assert.ok('text' in saved);
    assert.deepEqual(JSON.parse(saved.text), { version: 1, configurations: [smoke] });
    assert.deepEqual(parseRunConfigurations(saved.text), { configurations: [smoke] });
  });

  it('adds a configuration last, replaces one of the same name where it stands, and keeps the rest of the file', () => {
    const other = { ...smoke, name: 'other', overrides: [] };
    const text = file([smoke, other], { comment: 'kept' });
    const added = withConfiguration(text, { ...smoke, name: 'new' });
    assert.ok('text' in added);
    assert.deepEqual(JSON.parse(added.text), {
      version: 1,
      comment: 'kept',
      configurations: [smoke, other, { ...smoke, name: 'new' }],
    });
    const replaced = withConfiguration(text, { ...smoke, preset: 'builtin' });
    assert.ok('text' in replaced);
    assert.deepEqual((JSON.parse(replaced.text) as { configurations: unknown[] }).configurations, [
      { ...smoke, preset: 'builtin' },
      other,
    ]);
  });

  it('leaves a file that does not read as it is: the problem comes back, no text to write', () => {
    assert.deepEqual(withConfiguration('{"version": 1,', smoke), parseRunConfigurations('{"version": 1,'));
    assert.ok('problem' in withConfiguration(file([{ name: 'x' }]), smoke));
  });
});
