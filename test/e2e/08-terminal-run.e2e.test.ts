import * as assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { e2eSession } from './session';
import { Workbench } from './workbench';

// A researcher trains from a terminal (`empo2-host train`) in the workspace's run root and
// watches the run in VS Code: the window's host follows it from its files, and its episodes show
// in the Trajectories tree as they end, before their iteration is written, as the host's own
// run's do.

describe('A run trained from a terminal, as a person watches it', function () {
  this.timeout(600_000);
  const workbench = new Workbench();
  const runId = 'terminal-streamed';
  let trainer: ChildProcess | undefined;

  function lines(file: string): number {
    return existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter(Boolean).length : 0;
  }

  after(() => {
    if (trainer && trainer.exitCode === null) {
      trainer.kill('SIGKILL'); // a failed test leaves no run training for the files after it
    }
  });

  it("shows the terminal's episodes in the tree as they end, before their iteration is written", async () => {
    const { fixtures } = e2eSession();
    if (!(await workbench.statusBarItem('EMPO²: CPU').isVisible())) {
      // The files before this one leave the window's host stopped, or lost behind a cut link.
      await workbench.runCommand('EMPO²: Start Host').catch(() => workbench.runCommand('EMPO²: Restart Host'));
      await workbench.statusBarItem('EMPO²: CPU').waitFor({ timeout: 120_000 });
    }
    // The tiny policy never finishes these tasks, so each episode lasts max_steps steps: with
    // 200, the iteration's reflection and update after its episodes take seconds, long enough
    // to see its episodes before it is written on a fast machine too.
    const tiny = JSON.parse(readFileSync(fixtures.configFile, 'utf8')) as { env: object };
    const config = path.join(path.dirname(fixtures.configFile), 'terminal-streamed.json');
    writeFileSync(config, JSON.stringify({ ...tiny, iterations: 1, env: { ...tiny.env, max_steps: 200 } }, null, 2));
    await workbench.openViewContainer('EMPO²');
    await workbench.collapseTree();
    trainer = spawn(
      fixtures.python,
      ['-m', 'empo2.cli', 'train', '--config', config, '--root', fixtures.runRoot, '--name', runId],
      {
        env: { ...process.env, HF_HUB_OFFLINE: '1', TRANSFORMERS_OFFLINE: '1', EMPO2_NO_PROGRESS: '1' },
        stdio: 'ignore',
      },
    );
    const exited = new Promise<number | null>((resolve) => trainer!.on('exit', resolve));
    const folder = path.join(fixtures.runRoot, runId);
    const run = await workbench.waitForTreeRow(runId, 120_000);
    await workbench.expandRow(run);
    // Until then a row says where that process is ("Iteration 1: rollout step 26 of 200 in
    // another process…"); the iteration's own row ('Iteration 1', no colon) comes with its
    // first ended episode.
    const iteration = await workbench.waitForTreeRow('Iteration 1', 180_000);
    const written = lines(path.join(folder, 'trajectories', 'index.jsonl'));
    assert.equal(written, 0, "the terminal's episodes showed only once their iteration was written");
    assert.match(await iteration.innerText(), /episodes/, 'the row counts the episodes that ended');
    // Shot as it is: not expanded, since the row is replaced by the written iteration's within
    // seconds, and a click landing then toggles the new row.
    await workbench.screenshot('70-terminal-run-streaming');

    // And the terminal's run writes its iteration and ends; the tree shows it finished.
    assert.equal(await exited, 0, 'the terminal run exits cleanly');
    assert.equal(lines(path.join(folder, 'metrics.jsonl')), 1);
    const training = workbench
      .treeRow(runId)
      .filter({ has: workbench.page.locator('.codicon-sync, .codicon-loading') });
    await workbench.eventually(
      'the run shown no longer training',
      async () => ((await training.count()) === 0 ? true : undefined),
      60_000,
    );
  });
});
