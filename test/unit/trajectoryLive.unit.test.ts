import * as assert from 'node:assert/strict';
import { Notifications, Requests } from '../../src/rpc/methods';
import type { TrajectoryGetParams, TrajectoryListParams, TrajectorySummary } from '../../src/rpc/protocol';
import { RunsModel } from '../../src/runs/runsModel';
import { present } from '../../src/trajectories/presentation';
import { TrajectoryModel } from '../../src/trajectories/trajectoryModel';
import type { TrajectoryNode } from '../../src/trajectories/trajectoryNodes';
import { FakeHost } from '../builders/fakeHost';
import { anEpisode, anEpisodeId, aRunInfo, aStep, aSummary } from '../builders/protocol';

// The iteration a live run is playing, in the Trajectories tree: its episodes appear as they end
// (trajectory/progress), under a row that counts them, and the iteration's trajectory/added
// replaces them with the written ones.

const RUN = 'live';
const TOTAL = 4;

/** Iteration `iteration`'s episode `index` as written (tip and novelty reward known), in group index / 2. */
function written(iteration: number, index: number): TrajectorySummary {
  const group = Math.floor(index / 2);
  return aSummary({
    id: anEpisodeId(iteration, index),
    iteration,
    group,
    variation: group,
    success: index === 1,
    return: index === 1 ? 100 : 0,
    steps: 3,
    intrinsic: 0.5,
    tip_id: `t${iteration}${index}`,
  });
}

/** The same episode as the host reports it when it ends: no novelty reward, no tip yet. */
function ended(iteration: number, index: number): TrajectorySummary {
  const { intrinsic: _intrinsic, tip_id: _tip, ...summary } = written(iteration, index);
  return summary;
}

function aLiveRun() {
  const listed: TrajectorySummary[] = [0, 1, 2, 3].map((index) => written(1, index));
  const host = new FakeHost()
    .handle(Requests.runList, () => ({
      runs: [aRunInfo({ runId: RUN, state: 'running', live: true, iteration: 1, iterations: 5 })],
      roots: ['/home/ada/project/.empo2/runs'],
    }))
    .handle(Requests.runMetrics, () => ({ records: [] }))
    .handle(Requests.trajectoryList, (params: TrajectoryListParams) => {
      const items = listed.filter((s) => s.iteration === params.filter?.iteration);
      return { items, nextCursor: null, total: items.length };
    })
    // As the host answers: the record once written, else the episode as it ended (steps'
    // novelty rewards 0, no tip), provisional.
    .handle(Requests.trajectoryGet, ({ episodeId }: TrajectoryGetParams) => {
      const record = listed.find((s) => s.id === episodeId);
      const steps = [
        aStep({ t: 0, intrinsic: record ? 0.25 : 0 }),
        aStep({ t: 1, action: 'go to kitchen', executed_action: 'go to kitchen', intrinsic: record ? 0.25 : 0 }),
        aStep({ t: 2, action: 'take lamp', executed_action: 'take lamp' }),
      ];
      if (record) {
        return { episode: anEpisode({ ...record, steps, tip: 'the lamp is in the kitchen .' }) };
      }
      const index = Number(episodeId.split('-e')[1]);
      const {
        intrinsic: _intrinsic,
        tip_id: _tip,
        ...summary
      } = anEpisode({ ...ended(Number(episodeId.slice(1, 7)), index), steps, tip: null });
      return { episode: summary, provisional: true };
    });
  const runs = new RunsModel(host);
  const model = new TrajectoryModel(host, runs);
  let seq = 10;
  const episodeEnded = (iteration: number, index: number, done: number) =>
    host.notify(Notifications.trajectoryProgress, {
      seq: seq++,
      runId: RUN,
      iteration,
      done,
      total: TOTAL,
      summaries: [ended(iteration, index)],
    });
  const phase = (iteration: number, name: 'rollout' | 'reflection' | 'update') =>
    host.notify(Notifications.runProgress, {
      seq: seq++,
      runId: RUN,
      progress: { iteration, phase: name, done: 0, total: 1 },
    });
  const iterationWritten = (iteration: number) => {
    const summaries = [0, 1, 2, 3].map((index) => written(iteration, index));
    listed.push(...summaries);
    host.notify(Notifications.trajectoryAdded, { seq: seq++, runId: RUN, summaries });
  };
  return { host, runs, model, episodeEnded, phase, iterationWritten };
}

async function rows(model: TrajectoryModel, node: TrajectoryNode | undefined): Promise<TrajectoryNode[]> {
  return model.getChildren(node);
}

async function episodesUnder(model: TrajectoryModel, iteration: TrajectoryNode): Promise<TrajectoryNode[]> {
  const groups = await rows(model, iteration);
  return (await Promise.all(groups.map((group) => rows(model, group)))).flat();
}

function idOf(node: TrajectoryNode): string | undefined {
  return node.kind === 'episode' ? node.episodeId : undefined;
}

describe('TrajectoryModel, the iteration in progress', () => {
  it('shows episodes under the running iteration as they end, counted, then the written ones in their place', async () => {
    const { host, runs, model, episodeEnded, phase, iterationWritten } = aLiveRun();
    await runs.reload();
    const run = (await rows(model, undefined))[0];
    assert.deepEqual(
      (await rows(model, run)).map((n) => n.kind === 'iteration' && n.iteration),
      [1],
    );
    const changed: Array<string | undefined> = [];
    model.onDidChange((node) => changed.push(node?.id));

    // Iteration 2 plays: episode 2 ends first, then episode 1.
    phase(2, 'rollout');
    episodeEnded(2, 2, 1);
    assert.ok(changed.includes(run.id), 'the run node is refreshed: a new iteration row');
    const iterations = await rows(model, run);
    assert.deepEqual(
      iterations.map((n) => n.kind === 'iteration' && n.iteration),
      [2, 1],
    );
    const live = iterations[0];
    assert.equal(present(live, model).description, 'rollout 1/4 episodes · 0% ✓ · memory-free');
    assert.equal(present(live, model).contextValue, 'empo2.liveIteration');
    assert.deepEqual((await episodesUnder(model, live)).map(idOf), [anEpisodeId(2, 2)]);

    changed.length = 0;
    episodeEnded(2, 1, 2);
    assert.ok(changed.includes(live.id), 'the iteration row is refreshed as an episode ends');
    assert.equal(present(live, model).label, 'Iteration 2');
    assert.equal(present(live, model).description, 'rollout 2/4 episodes · 50% ✓ · memory-free');
    const provisional = await episodesUnder(model, live);
    assert.deepEqual(provisional.map(idOf), [anEpisodeId(2, 1), anEpisodeId(2, 2)], 'in their task groups');
    for (const episode of provisional) {
      const shown = present(episode, model);
      assert.equal(
        shown.contextValue,
        'empo2.liveEpisode',
        'no episode menus (debug, rerun): they read the written record',
      );
      assert.equal(shown.collapsible, 'collapsed', 'its steps are listed as it ended');
      assert.deepEqual(shown.open, { runId: RUN, episodeId: idOf(episode) }, 'a click opens it as it ended');
      assert.match(shown.tooltip ?? '', /3 steps/);
      assert.match(shown.tooltip ?? '', /opens as it ended/);
    }

    episodeEnded(2, 0, 3);
    episodeEnded(2, 3, 4);
    changed.length = 0;
    phase(2, 'reflection');
    assert.ok(changed.includes(live.id), 'the iteration row is refreshed when the phase changes');
    assert.equal(present(live, model).description, 'reflection · 4/4 episodes · 25% ✓ · memory-free');
    assert.equal(host.callsOf('trajectory.list').length, 0, 'the episodes came with the notifications');

    // The iteration is written: an ordinary row, the written episodes under the same nodes.
    iterationWritten(2);
    const after = await rows(model, run);
    assert.equal(after[0], live, 'the same node: VS Code keeps its expansion');
    assert.equal(present(live, model).contextValue, 'empo2.iteration');
    assert.equal(present(live, model).description, '25% ✓ · score 25.0 · memory-free');
    const final = await episodesUnder(model, live);
    assert.deepEqual(
      final.map(idOf),
      [0, 1, 2, 3].map((index) => anEpisodeId(2, index)),
    );
    assert.ok(
      provisional.every((node) => final.includes(node)),
      'an ended episode keeps its node',
    );
    for (const episode of final) {
      const shown = present(episode, model);
      assert.equal(shown.contextValue, 'empo2.episode');
      assert.deepEqual(shown.open, { runId: RUN, episodeId: idOf(episode) });
      assert.match(shown.tooltip ?? '', /Wrote tip t2/);
    }
    assert.equal(host.callsOf('trajectory.list').length, 0, 'the written episodes came with trajectory/added');

    // A late report of a written iteration changes nothing.
    episodeEnded(2, 3, 4);
    assert.equal(present(live, model).contextValue, 'empo2.iteration');
    assert.deepEqual(host.violations, []);
  });

  it('opens an ended episode as it ended, lists its steps, and loads its record once the iteration is written', async () => {
    const { host, runs, model, episodeEnded, iterationWritten } = aLiveRun();
    await runs.reload();
    const run = (await rows(model, undefined))[0];
    const written2: Array<{ runId: string; iteration: number }> = [];
    model.onDidWriteIteration((event) => written2.push(event));
    episodeEnded(2, 1, 1);
    const [live] = await rows(model, run);
    const [episode] = await episodesUnder(model, live);
    const id = anEpisodeId(2, 1);

    const first = await model.episode(RUN, id);
    assert.equal(first.provisional, true);
    assert.equal(first.episode.tip, null);
    const steps = await rows(model, episode);
    assert.deepEqual(
      steps.map((s) => present(s, model).label),
      ['t0: look around', 't1: go to kitchen', 't2: take lamp'],
    );
    assert.match(present(steps[0], model).description ?? '', /^reward /);
    assert.match(present(steps[0], model).tooltip ?? '', /intrinsic pending/, 'not computed yet');
    await model.episode(RUN, id);
    assert.equal(host.callsOf('trajectory.get').length, 1, 'kept while its iteration trains');

    iterationWritten(2);
    assert.deepEqual(written2, [{ runId: RUN, iteration: 2 }], 'the episode view hears it and shows the record');
    const record = await model.episode(RUN, id);
    assert.equal(host.callsOf('trajectory.get').length, 2, 'the provisional one was dropped: the record is loaded');
    assert.equal(record.provisional, false);
    assert.equal(record.episode.tip, 'the lamp is in the kitchen .');
    assert.match(
      present(steps[0], model).description ?? '',
      /intrinsic \+0\.25/,
      'the step rows show the novelty reward now',
    );
    assert.match(present(steps[0], model).tooltip ?? '', /intrinsic \+0\.25/);
    assert.deepEqual(host.violations, []);
  });

  it('forgets an episode loaded as it ended when its run stops mid-iteration', async () => {
    const { host, runs, model, episodeEnded } = aLiveRun();
    await runs.reload();
    await rows(model, (await rows(model, undefined))[0]);
    episodeEnded(2, 0, 1);
    assert.equal((await model.episode(RUN, anEpisodeId(2, 0))).provisional, true);
    host.notify(Notifications.runState, {
      seq: 99,
      run: aRunInfo({ runId: RUN, state: 'stopped', live: false, iteration: 1, iterations: 5 }),
    });
    await model.episode(RUN, anEpisodeId(2, 0));
    assert.equal(host.callsOf('trajectory.get').length, 2, 'asked again: the host now says whether it exists');
  });

  it('drops the row of an iteration that will not be written when its run stops moving', async () => {
    const { host, runs, model, episodeEnded } = aLiveRun();
    await runs.reload();
    const run = (await rows(model, undefined))[0];
    episodeEnded(2, 0, 1);
    assert.equal((await rows(model, run)).length, 2);
    host.notify(Notifications.runState, {
      seq: 99,
      run: aRunInfo({ runId: RUN, state: 'failed', live: false, iteration: 1, iterations: 5, error: 'out of memory' }),
    });
    assert.deepEqual(
      (await rows(model, run)).map((n) => n.kind === 'iteration' && n.iteration),
      [1],
    );
    assert.deepEqual(host.violations, []);
  });

  it('ignores episodes of a run it does not list', async () => {
    const { runs, model, episodeEnded } = aLiveRun();
    episodeEnded(2, 0, 1); // before the run list is loaded
    await runs.reload();
    const run = (await rows(model, undefined))[0];
    assert.deepEqual(
      (await rows(model, run)).map((n) => n.kind === 'iteration' && n.iteration),
      [1],
    );
  });

  it('says what a starting run waits for, in one row under it, until its first episode ends; and a later iteration until its first', async () => {
    const host = new FakeHost()
      .handle(Requests.runList, () => ({
        runs: [aRunInfo({ runId: RUN, state: 'starting', live: true, iteration: 0, iterations: 5 })],
        roots: ['/home/ada/project/.empo2/runs'],
      }))
      .handle(Requests.runStatus, () => ({ run: null }))
      .handle(Requests.runMetrics, () => ({ records: [] }))
      .handle(Requests.trajectoryList, () => ({ items: [], nextCursor: null, total: 0 }));
    const runs = new RunsModel(host);
    const model = new TrajectoryModel(host, runs);
    await runs.reload();
    const [run] = await rows(model, undefined);
    const waiting = async () => {
      await model.getChildren(run);
      return model.waitingRow(run);
    };
    assert.equal((await waiting())?.text, 'Loading the policy…');
    assert.equal(present(run, model).collapsible, 'expanded', 'open, so the row shows');

    const changed: Array<string | undefined> = [];
    model.onDidChange((node) => changed.push(node?.id));
    let seq = 10;
    host.notify(Notifications.runProgress, {
      seq: seq++,
      runId: RUN,
      progress: { iteration: 0, phase: 'preparing', done: 120, total: 3000 },
    });
    assert.ok(changed.includes(run.id), 'the run node is refreshed as the policy is prepared');
    const preparing = await waiting();
    assert.equal(preparing?.text, 'Building the built-in policy (once): step 120 of 3000…');
    assert.equal(preparing?.waiting, true);

    host.notify(Notifications.runProgress, {
      seq: seq++,
      runId: RUN,
      progress: { iteration: 0, phase: 'preparing', done: 3000, total: 3000 },
    });
    assert.equal((await waiting())?.text, 'Loading the policy…', 'built: the policy loads');
    host.notify(Notifications.runState, {
      seq: seq++,
      run: aRunInfo({ runId: RUN, state: 'running', live: true, iteration: 0, iterations: 5 }),
    });
    assert.equal((await waiting())?.text, 'Waiting for the first episode (rollout)…');
    assert.equal((await waiting())?.id, preparing?.id, 'one row whose text changes');
    host.notify(Notifications.runProgress, {
      seq: seq++,
      runId: RUN,
      progress: { iteration: 1, phase: 'rollout', done: 4, total: 480 },
    });
    assert.equal((await waiting())?.text, 'Waiting for the first episode (rollout: step 4 of 480)…');

    host.notify(Notifications.trajectoryProgress, {
      seq: seq++,
      runId: RUN,
      iteration: 1,
      done: 1,
      total: TOTAL,
      summaries: [ended(1, 0)],
    });
    assert.equal(await waiting(), undefined, 'gone once the first episode ended');
    const children = await model.getChildren(run);
    assert.deepEqual(
      children.map((n) => n.kind === 'iteration' && n.iteration),
      [1],
    );
    assert.equal(present(children[0], model).contextValue, 'empo2.liveIteration');
    assert.equal(present(run, model).collapsible, 'collapsed');

    // Iteration 1 written, iteration 2 rolling out with no episode ended: its row stands first.
    host.notify(Notifications.trajectoryAdded, { seq: seq++, runId: RUN, summaries: [written(1, 0)] });
    host.notify(Notifications.runProgress, {
      seq: seq++,
      runId: RUN,
      progress: { iteration: 2, phase: 'rollout', done: 3, total: 480 },
    });
    assert.equal((await waiting())?.text, 'Iteration 2: waiting for its first episode (rollout: step 3 of 480)…');
    assert.deepEqual(
      (await model.getChildren(run)).map((n) => n.kind === 'iteration' && n.iteration),
      [1],
      'no row of iteration 2 yet',
    );
    host.notify(Notifications.trajectoryProgress, {
      seq,
      runId: RUN,
      iteration: 2,
      done: 1,
      total: TOTAL,
      summaries: [ended(2, 0)],
    });
    assert.equal(await waiting(), undefined, 'gone once its first episode ended');
    assert.deepEqual(
      (await model.getChildren(run)).map((n) => n.kind === 'iteration' && n.iteration),
      [2, 1],
    );
    assert.deepEqual(host.violations, []);
  });

  it('says nothing is awaited by a run that is not training', async () => {
    const { runs, model } = aLiveRun();
    await runs.reload();
    const [run] = await rows(model, undefined);
    assert.equal(model.waitingRow(run), undefined);
  });
});

describe('TrajectoryModel, a run another process trains', () => {
  // A terminal's `empo2-host train`, or another window's host: this host follows its files and
  // sends what it writes as the trainer's own hooks would (run/state, trajectory/added).
  function anotherProcessRun() {
    const listed: TrajectorySummary[] = [0, 1, 2, 3].map((index) => written(1, index));
    const host = new FakeHost()
      .handle(Requests.runList, () => ({
        runs: [aRunInfo({ runId: 'term', state: 'running', live: false, iteration: 1, iterations: 5 })],
        roots: ['/home/ada/project/.empo2/runs'],
      }))
      .handle(Requests.runMetrics, () => ({ records: [] }))
      .handle(Requests.trajectoryList, (params: TrajectoryListParams) => {
        const items = listed.filter((s) => s.iteration === params.filter?.iteration);
        return { items, nextCursor: null, total: items.length };
      });
    const runs = new RunsModel(host);
    return { host, runs, model: new TrajectoryModel(host, runs), listed };
  }

  it('says who trains it, lists its iterations as they are written, and shows it finish', async () => {
    const { host, runs, model, listed } = anotherProcessRun();
    await runs.reload();
    const [run] = await model.getChildren(undefined);
    assert.match(
      present(run, model).tooltip ?? '',
      /State: running \(trained by another process; the host follows what it writes\)/,
    );
    assert.deepEqual(
      (await model.getChildren(run)).map((n) => n.kind === 'iteration' && n.iteration),
      [1],
    );

    listed.push(...[0, 1, 2, 3].map((index) => written(2, index)));
    host.notify(Notifications.trajectoryAdded, { seq: 1, runId: 'term', summaries: listed.slice(4) });
    assert.deepEqual(
      (await model.getChildren(run)).map((n) => n.kind === 'iteration' && n.iteration),
      [2, 1],
    );
    // Where it is within the iteration it has not written yet, from the run's progress.json.
    assert.equal(model.waitingRow(run), undefined, 'nothing said before the host says it');
    host.notify(Notifications.runProgress, {
      seq: 2,
      runId: 'term',
      progress: { iteration: 3, phase: 'rollout', done: 4, total: 9 },
    });
    assert.equal(
      model.waitingRow(run)?.text,
      'Iteration 3: rollout step 4 of 9 in another process; its episodes show once it is written…',
    );
    assert.match(present(run, model).tooltip ?? '', /Iteration 3: rollout step 4 of 9 in another process/);
    assert.equal(present(run, model).collapsible, 'collapsed', 'left as the person left it');
    host.notify(Notifications.runProgress, {
      seq: 3,
      runId: 'term',
      progress: { iteration: 3, phase: 'evaluation', done: 0, total: 1 },
    });
    assert.equal(
      model.waitingRow(run)?.text,
      'Iteration 3: evaluation in another process; its episodes show once it is written…',
    );
    listed.push(...[0, 1, 2, 3].map((index) => written(3, index)));
    host.notify(Notifications.trajectoryAdded, { seq: 4, runId: 'term', summaries: listed.slice(8) });
    assert.equal(model.waitingRow(run), undefined, 'written: its row is there');

    host.notify(Notifications.runState, {
      seq: 5,
      run: aRunInfo({ runId: 'term', state: 'finished', live: false, iteration: 3, iterations: 3 }),
    });
    assert.equal(present(run, model).description, 'finished');
    assert.doesNotMatch(present(run, model).tooltip ?? '', /another process/);

    // Its host gone, a run last heard active is not said to be trained elsewhere.
    host.notify(Notifications.runState, {
      seq: 6,
      run: aRunInfo({ runId: 'term', state: 'running', live: false, iteration: 3, iterations: 5 }),
    });
    host.notify(Notifications.runProgress, {
      seq: 7,
      runId: 'term',
      progress: { iteration: 4, phase: 'rollout', done: 1, total: 9 },
    });
    assert.match(model.waitingRow(run)?.text ?? '', /^Iteration 4: rollout/);
    host.disconnect(true);
    assert.doesNotMatch(present(run, model).tooltip ?? '', /another process/);
    assert.equal(model.waitingRow(run), undefined);
    assert.deepEqual(host.violations, []);
  });
});
