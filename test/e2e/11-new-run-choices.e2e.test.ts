import * as assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import type { Locator } from 'playwright-core';
import { e2eSession } from './session';
import { Workbench } from './workbench';

// A researcher sets up a new run in VS Code: the environment, the model (the real one the docs
// describe, SmolLM2-135M-Instruct from its package) and the preset picked,
// an override typed (a wrong one first: the host's sentence shows in the input, which stays
// open), the run started with it; then the choice saved as a named run configuration in
// .vscode/empo2-runs.json and started again from the Trajectories view's title menu.

describe('New Training Run chooses what matters, as a person does it', function () {
  this.timeout(600_000); // two one-iteration runs of SmolLM2 on a CPU
  const workbench = new Workbench();
  const configurationsFile = () => path.join(e2eSession().workspace, '.vscode', 'empo2-runs.json');
  const saved = {
    name: 'smoke once',
    env: 'builtin',
    model: 'smollm2-135m-instruct',
    preset: 'builtin-smoke',
    // No evaluation pass: the run only has to start and finish (SmolLM2's final evaluation on a
    // CPU was about half of each run's time).
    overrides: ['iterations=1', 'eval.every=0'],
  };
  let firstRun = '';

  function runConfig(runId: string): {
    iterations: number;
    env: { name: string };
    policy: { model: string };
    eval: { every: number };
  } {
    return JSON.parse(readFileSync(path.join(e2eSession().fixtures.runRoot, runId, 'config.json'), 'utf8'));
  }

  /** The run id a "<run> started: …" notification names, once it shows. */
  async function startedRun(choice: RegExp): Promise<{ runId: string; toast: Locator }> {
    const toast = workbench.notification(choice).first();
    await toast.waitFor({ timeout: 120_000 });
    const text = await toast.innerText();
    const runId = /EMPO²: (\S+) started:/.exec(text)?.[1];
    assert.ok(runId, `a run id in "${text}"`);
    return { runId, toast };
  }

  async function waitForFinished(runId: string): Promise<void> {
    await workbench.eventually(
      `${runId} to finish`,
      async () => {
        try {
          return JSON.parse(readFileSync(path.join(e2eSession().fixtures.runRoot, runId, 'run.json'), 'utf8')).state ===
            'finished'
            ? true
            : undefined;
        } catch {
          return undefined;
        }
      },
      540_000,
    );
  }

  /** Waits for the step of the flow whose title ends in `(n/4): what`; a failure says what shows instead. */
  async function atStep(step: string): Promise<void> {
    try {
      await workbench
        .quickInputTitle()
        .filter({ hasText: `(${step}` })
        .waitFor({ timeout: 60_000 });
    } catch (error) {
      const shown = await workbench
        .quickInput()
        .innerText({ timeout: 1_000 })
        .catch(() => '(no quick input)');
      throw new Error(`${(error as Error).message.split('\n')[0]}; the quick input shows: ${JSON.stringify(shown)}`, {
        cause: error,
      });
    }
  }

  /** Picks the row labelled `label` of the step's list, once it shows. */
  async function choose(label: string): Promise<void> {
    const row = workbench.paletteRow(label).first();
    try {
      await row.waitFor({ timeout: 120_000 });
    } catch (error) {
      const shown = await workbench
        .quickInput()
        .innerText({ timeout: 1_000 })
        .catch(() => '(no quick input)');
      throw new Error(
        `no row "${label}": ${(error as Error).message.split('\n')[0]}; the quick input shows: ${JSON.stringify(shown)}`,
        { cause: error },
      );
    }
    await row.click();
  }

  it('walks environment, model, preset and an override the host checks, and starts the run with it', async () => {
    rmSync(configurationsFile(), { force: true });
    if (!(await workbench.statusBarItem('EMPO²: CPU').isVisible())) {
      await workbench.runCommand('EMPO²: Start Host').catch(() => workbench.runCommand('EMPO²: Restart Host'));
      await workbench.statusBarItem('EMPO²: CPU').waitFor({ timeout: 120_000 });
    }
    await workbench.clearNotifications();
    await workbench.pickCommand('EMPO²: New Training Run');
    await atStep('1/4): environment');
    // The host's environments, and beside them what starts as it is (the workspace's config files).
    await workbench
      .quickInputRows()
      .filter({ hasText: '.empo2/configs/tiny.json' })
      .first()
      .waitFor({ timeout: 60_000 });
    await workbench.screenshot('30-new-run-environment');
    await choose('builtin');

    await atStep('2/4): model');
    // policy.list: the built-in policy, the packaged SmolLM2, and a folder from disk.
    await workbench
      .quickInputRows()
      .filter({ hasText: 'Local Hugging Face folder' })
      .first()
      .waitFor({ timeout: 120_000 });
    const models = (await workbench.quickInputRows().allInnerTexts()).join('\n');
    assert.match(models, /SmolLM2-135M-Instruct/);
    assert.match(models, /Local Hugging Face folder…/);
    await workbench.screenshot('31-new-run-model');
    await choose('SmolLM2-135M-Instruct');

    await atStep('3/4): preset');
    await choose('builtin-smoke');

    await atStep('4/4): overrides');
    const input = workbench.quickInput().locator('input').first();
    await input.fill('iterations=two');
    await workbench.page.keyboard.press('Enter');
    // The host's own sentence, in the input; the flow stays open on the same step.
    const refusal = "config key 'iterations' must be an integer, not 'two'";
    await workbench.quickInput().getByText(refusal).first().waitFor({ timeout: 60_000 });
    await workbench.screenshot('32-new-run-override-refused');
    assert.ok(
      await workbench.quickInputTitle().filter({ hasText: '(4/4): overrides' }).isVisible(),
      'the input stays open',
    );
    assert.equal(await input.inputValue(), 'iterations=two', 'what was typed stays to be fixed');
    assert.equal(await workbench.notification(/started:/).count(), 0, 'no run started');

    await input.fill(saved.overrides.join(' '));
    await workbench.page.keyboard.press('Enter');
    await workbench.quickInput().waitFor({ state: 'hidden', timeout: 60_000 });
    const { runId } = await startedRun(
      /started: builtin · smollm2-135m-instruct · builtin-smoke · iterations=1 eval\.every=0/,
    );
    firstRun = runId;
    const config = await workbench.eventually(
      "the run's config.json",
      async () => {
        try {
          return runConfig(runId);
        } catch {
          return undefined;
        }
      },
      60_000,
    );
    assert.equal(config.iterations, 1, "the overrides are in the run's config");
    assert.equal(config.eval.every, 0);
    assert.equal(config.env.name, 'builtin');
    assert.equal(config.policy.model, 'smollm2-135m-instruct');
    await workbench.screenshot('33-new-run-started');
  });

  it('saves the choice as a named run configuration in .vscode/empo2-runs.json', async () => {
    assert.ok(firstRun, 'the run of the first test started');
    const toast = workbench.notification(`${firstRun} started:`).first();
    await toast.hover();
    await toast.getByRole('button', { name: 'Save as Run Configuration…' }).click();
    await workbench.quickInputTitle().filter({ hasText: 'Save as Run Configuration' }).waitFor();
    const input = workbench.quickInput().locator('input').first();
    await input.fill(saved.name);
    await workbench.page.keyboard.press('Enter');
    await workbench.quickInput().waitFor({ state: 'hidden' });
    const file = await workbench.eventually(
      'the saved configuration',
      async () => (existsSync(configurationsFile()) ? readFileSync(configurationsFile(), 'utf8') : undefined),
      20_000,
    );
    assert.deepEqual(JSON.parse(file), { version: 1, configurations: [saved] });
  });

  it("starts the saved configuration again from the Trajectories view's title menu", async () => {
    assert.ok(existsSync(configurationsFile()), 'a saved configuration');
    await waitForFinished(firstRun);
    const before = new Set(readdirSync(e2eSession().fixtures.runRoot));
    await workbench.clearNotifications();
    await workbench.openViewContainer('EMPO²');
    const header = workbench.viewHeader('Trajectories');
    await header.hover();
    await header.locator('.action-label[aria-label^="More Actions"]').click();
    const item = workbench.page.getByRole('menuitem', { name: 'Start Saved Run Configuration' });
    await item.hover();
    await workbench.page.waitForTimeout(300);
    await item.click();
    await workbench
      .quickInputTitle()
      .filter({ hasText: 'EMPO²: Start Saved Run Configuration' })
      .waitFor({ timeout: 30_000 });
    await workbench.paletteRow(saved.name).first().click();
    await workbench.quickInput().waitFor({ state: 'hidden' });
    // The host names a preset's run after the preset: the new folder is this run's.
    const second = await workbench.eventually(
      'a new run of the configuration',
      async () =>
        readdirSync(e2eSession().fixtures.runRoot).find(
          (name) => !before.has(name) && existsSync(path.join(e2eSession().fixtures.runRoot, name, 'config.json')),
        ),
      120_000,
    );
    assert.match(second, /^builtin-smoke/);
    assert.equal(runConfig(second).iterations, 1);
    await waitForFinished(second);
  });

  it('says in one sentence that a broken file does not read, and leaves it as it is', async () => {
    const broken = '{"version": 1, "configurations": [\n';
    writeFileSync(configurationsFile(), broken);
    await workbench.clearNotifications();
    await workbench.runCommand('EMPO²: Start Saved Run Configuration');
    await workbench
      .notification(/\.vscode\/empo2-runs\.json is not valid JSON/)
      .first()
      .waitFor({ timeout: 30_000 });
    await workbench.screenshot('34-saved-run-file-broken');
    assert.equal(readFileSync(configurationsFile(), 'utf8'), broken);
    rmSync(configurationsFile(), { force: true });
  });
});
