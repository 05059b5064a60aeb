import * as assert from 'node:assert/strict';
import { ellipsize } from '../../src/common/text';
import { runContext, runContextValue } from '../../src/runs/runContext';
import type { RunEntry } from '../../src/runs/runsModel';
import { resumeQuestion } from '../../src/runs/runText';
import { Notifications, Requests } from '../../src/rpc/methods';
import { RunsModel } from '../../src/runs/runsModel';
import { ResumeAfterRestart } from '../../src/runGuard/resumeAfterRestart';
import { resumeDecision, stopQuestion } from '../../src/runGuard/runGuardText';
import { FakeHost } from '../builders/fakeHost';
import { aRunInfo } from '../builders/protocol';
import { eventually } from '../builders/wait';

function anEntry(state: RunEntry['info']['state'], live: boolean, iteration = 4): RunEntry {
  return {
    info: aRunInfo({ runId: 'builtin-1', state, live, iteration, iterations: 40 }),
    progress: live ? { iteration: iteration + 1, phase: 'rollout', done: 3, total: 15 } : null,
    latestMetrics: null,
    trajectoryIteration: iteration,
    config: undefined,
  };
}

describe('stopping or restarting a host while a run trains', () => {
  it('asks first, naming the iteration in progress and what each choice costs', () => {
    const question = stopQuestion('restart', anEntry('running', true));
    assert.ok(question);
    assert.equal(question.message, 'builtin-1 is training iteration 5 of 40. Restart the host?');
    assert.match(question.detail, /"Pause After This Iteration" lets iteration 5 finish first/);
    assert.match(
      question.detail,
      /"Now" stops at once: iteration 5 is dropped, and when the run is resumed it continues with iteration 5 \(after iteration 4, its last checkpoint\)\./,
    );
    assert.equal(question.alreadyPaused, false);
  });

  it('asks the same before Connect to Remote Host stops the host running here', () => {
    const question = stopQuestion('connect', anEntry('running', true, 2));
    assert.ok(question);
    assert.equal(
      question.message,
      'builtin-1 is training iteration 3 of 40. Stop the local host and connect to the remote one?',
    );
    assert.match(
      question.detail,
      /iteration 3 is dropped, and when the run is resumed it continues with iteration 3 \(after iteration 2, its last checkpoint\)\. The run stays on this machine/,
    );
  });

  it('asks nothing of an idle host, and does not ask to pause a paused run', () => {
    assert.equal(stopQuestion('stop', anEntry('finished', false)), undefined);
    assert.equal(stopQuestion('stop', anEntry('stopping', true)), undefined);
    assert.equal(stopQuestion('stop', anEntry('paused', true))?.alreadyPaused, true);
  });

  it('resumes the interrupted run when a host is back, as the setting says', () => {
    const interrupted = anEntry('interrupted', false);
    assert.equal(resumeDecision(interrupted, 'resume'), 'resume');
    assert.equal(resumeDecision(interrupted, 'ask'), 'ask');
    assert.equal(resumeDecision(interrupted, 'never'), 'leave');
    assert.equal(resumeDecision(undefined, 'resume'), 'wait', 'not listed yet');
    assert.equal(resumeDecision(anEntry('running', true), 'resume'), 'leave', 'already resumed');
    assert.equal(resumeDecision(anEntry('finished', false), 'resume'), 'leave');
  });
});

describe('resuming the run a Restart Host interrupted', () => {
  function aRestart() {
    const host = new FakeHost();
    let listed = aRunInfo({ runId: 'builtin-1', state: 'paused', live: true, iteration: 4, iterations: 40 });
    host.handle(Requests.runList, () => ({ runs: [listed], roots: ['/home/ada/project/.empo2/runs'] }));
    host.handle(Requests.runStatus, () => ({ run: null }));
    const runs = new RunsModel(host);
    const resumedOn: unknown[] = [];
    const failures: string[] = [];
    const resumer = new ResumeAfterRestart(host, runs, {
      setting: () => 'resume',
      ask: async () => true,
      resume: async (runId) => {
        if (!host.current) {
          throw new Error('the client was disposed');
        }
        resumedOn.push(host.current);
        return runId;
      },
      failed: (runId, error) => failures.push(`${runId}: ${String(error)}`),
    });
    const interrupt = (): void => {
      listed = { ...listed, state: 'interrupted', live: false };
      host.notify(Notifications.runState, { seq: 1, run: listed });
    };
    return { host, runs, resumer, resumedOn, failures, interrupt };
  }

  it('sends the resume to the host that comes back, not to the one shutting down', async () => {
    const { host, runs, resumer, resumedOn, failures, interrupt } = aRestart();
    await runs.reload();
    const old = host.current;
    resumer.interrupted('builtin-1');
    // The old host ends the run "interrupted" while its connection is still open ("host stopping…").
    interrupt();
    await new Promise((resolve) => setTimeout(resolve, 20));
    assert.deepEqual(resumedOn, [], 'nothing sent to the host that is going away');
    host.disconnect();
    host.connect();
    await eventually('the resume', () => resumedOn.length > 0);
    assert.notEqual(resumedOn[0], old);
    assert.equal(resumedOn[0], host.current, 'sent to the new host');
    assert.deepEqual(failures, []);
    // Once: a later change of the run list does not resume it again.
    await runs.reload();
    assert.equal(resumedOn.length, 1);
  });

  it('leaves the run when the setting says never, and forgets it', async () => {
    const { host, runs, resumedOn } = aRestart();
    const resumer = new ResumeAfterRestart(host, runs, {
      setting: () => 'never',
      ask: async () => true,
      resume: async () => resumedOn.push('x'),
      failed: () => undefined,
    });
    await runs.reload();
    resumer.interrupted('builtin-1');
    host.disconnect();
    host.connect();
    await runs.reload();
    assert.deepEqual(resumedOn, []);
  });
});

describe('run context keys for `when` clauses', () => {
  it('offers Pause only while a run trains, Resume where Pause was', () => {
    assert.deepEqual(runContext(undefined, undefined), {
      'empo2.runLive': false,
      'empo2.liveRunState': 'none',
      'empo2.runState': 'none',
    });
    const paused = anEntry('paused', true);
    assert.deepEqual(runContext(paused, paused), {
      'empo2.runLive': true,
      'empo2.liveRunState': 'paused',
      'empo2.runState': 'paused',
    });
    assert.equal(runContextValue(paused), 'empo2.run.live.paused');
    assert.equal(runContextValue(anEntry('interrupted', false)), 'empo2.run.interrupted');
  });
});

describe('wording', () => {
  it('ellipsizes cut text at a word', () => {
    assert.equal(ellipsize('short', 80), 'short');
    const cut = ellipsize(
      'the battery is in the shed; open the shed first and then walk to the garden to find the lamp',
      40,
    );
    assert.ok(cut.endsWith('…') && cut.length <= 40, cut);
    assert.equal(cut, 'the battery is in the shed; open the…');
  });

  it('says in plain words what resuming does', () => {
    assert.equal(
      resumeQuestion('builtin-1', 7),
      'EMPO²: resume training builtin-1? It continues with iteration 8 (after iteration 7, its last checkpoint). What an unfinished iteration recorded since then is removed and trained again.',
    );
    assert.match(
      resumeQuestion('builtin-1', 0),
      /\? It continues with iteration 1 \(from the start: no iteration has finished\)\./,
    );
  });
});
