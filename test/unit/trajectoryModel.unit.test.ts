import * as assert from 'node:assert/strict';
import { Notifications, Requests } from '../../src/rpc/methods';
import type { TrajectoryListParams, TrajectorySummary } from '../../src/rpc/protocol';
import { RunsModel } from '../../src/runs/runsModel';
import { successText, present } from '../../src/trajectories/presentation';
import { TrajectoryModel } from '../../src/trajectories/trajectoryModel';
import { PAGE_SIZE, type TrajectoryNode } from '../../src/trajectories/trajectoryNodes';
import { FakeHost } from '../builders/fakeHost';
import { aMetricsRecord, anEpisode, anEpisodeId, aRunInfo, aStep, aSummary } from '../builders/protocol';

// The Trajectories tree's data, against a fake host whose run has `iterations` × `tasks` ×
// `rollouts` episodes; the host answers trajectory.list like the real one (filter, cursor, limit).

function aRun(options: { iterations: number; tasks: number; rollouts: number; configured?: number }) {
  const summaries: TrajectorySummary[] = [];
  for (let iteration = 1; iteration <= options.iterations; iteration++) {
    let index = 0;
    for (let group = 0; group < options.tasks; group++) {
      for (let r = 0; r < options.rollouts; r++) {
        summaries.push(
          aSummary({
            id: anEpisodeId(iteration, index++),
            iteration,
            group,
            task: group % 2 ? 'grow-plant' : 'power-device',
            variation: group,
            rollout_mode: iteration % 4 === 0 ? 'memory' : 'memory-free',
            update_mode: iteration % 4 === 0 ? 'off-policy' : 'on-policy',
            success: r === 0,
            return: r === 0 ? 1 : 0,
          }),
        );
      }
    }
  }
  const host = new FakeHost()
    .handle(Requests.runList, () => ({
      runs: [aRunInfo({ runId: 'big', iteration: options.iterations, iterations: options.configured ?? options.iterations })],
      roots: ['/tmp/runs'],
    }))
    .handle(Requests.runMetrics, () => ({ records: [aMetricsRecord({ iteration: 1, rollout_mode: 'memory', update_mode: 'on-policy-with-tips', 'rollout/return': 0.5 })] }))
    .handle(Requests.trajectoryList, (params: TrajectoryListParams) => {
      const matching = summaries.filter((s) => params.filter?.iteration === undefined || s.iteration === params.filter.iteration);
      const start = params.cursor ? Number(params.cursor.slice(1)) : 0;
      const limit = params.limit ?? 100;
      const items = matching.slice(start, start + limit);
      const end = start + items.length;
      return { items, nextCursor: end < matching.length ? `o${end}` : null, total: matching.length };
    })
    .handle(Requests.trajectoryGet, ({ episodeId }) => ({
      episode: anEpisode({ ...summaries.find((s) => s.id === episodeId)!, steps: Array.from({ length: 3 }, (_, t) => aStep({ t, action: `act ${t}`, executed_action: `act ${t}` })) }),
    }));
  const runs = new RunsModel(host);
  const model = new TrajectoryModel(host, runs);
  return { host, runs, model, summaries };
}

async function child(model: TrajectoryModel, node: TrajectoryNode | undefined, index: number): Promise<TrajectoryNode> {
  return (await model.getChildren(node))[index];
}

describe('TrajectoryModel', () => {
  it('builds Run → Iteration (newest first) → Task group → Episode → Step', async () => {
    const { runs, model, host } = aRun({ iterations: 3, tasks: 2, rollouts: 4 });
    await runs.reload();
    const [run] = await model.getChildren();
    assert.equal(run.kind, 'run');
    const iterations = await model.getChildren(run);
    assert.deepEqual(iterations.map((n) => n.kind === 'iteration' && n.iteration), [3, 2, 1]);
    const groups = await model.getChildren(iterations[2]);
    assert.equal(groups.length, 2);
    const episodes = await model.getChildren(groups[1]);
    assert.equal(episodes.length, 4);
    assert.deepEqual(episodes.map((n) => n.kind === 'episode' && n.episodeId), ['i000001-e0004', 'i000001-e0005', 'i000001-e0006', 'i000001-e0007']);
    const steps = await model.getChildren(episodes[0]);
    assert.deepEqual(steps.map((n) => present(n, model).label), ['t0: act 0', 't1: act 1', 't2: act 2']);
    assert.equal(model.getParent(steps[0]), episodes[0]);
    assert.equal(model.getParent(episodes[0]), groups[1]);
    assert.deepEqual(host.violations, []);
  });

  it('loads one iteration with one trajectory.list per 1,000 episodes and caches it', async () => {
    const { runs, model, host } = aRun({ iterations: 2, tasks: 25, rollouts: 100 }); // 2,500 per iteration
    await runs.reload();
    const run = await child(model, undefined, 0);
    const iteration = await child(model, run, 0);
    const groups = await model.getChildren(iteration);
    assert.equal(groups.length, 25);
    assert.equal(host.callsOf('trajectory.list').length, 3);
    await model.getChildren(iteration);
    await model.getChildren(groups[0]);
    assert.equal(host.callsOf('trajectory.list').length, 3, 'cached');
  });

  it('pages long lists: PAGE_SIZE children, then a "more" node holding the next page', async () => {
    const { runs, model } = aRun({ iterations: 1, tasks: 1, rollouts: PAGE_SIZE * 2 + 10 });
    await runs.reload();
    const group = await child(model, await child(model, await child(model, undefined, 0), 0), 0);
    const page1 = await model.getChildren(group);
    assert.equal(page1.length, PAGE_SIZE + 1);
    const more = page1[PAGE_SIZE];
    assert.equal(more.kind, 'more');
    assert.equal(present(more, model).label, `${PAGE_SIZE + 10} more episodes…`);
    const page2 = await model.getChildren(more);
    assert.equal(page2.length, PAGE_SIZE + 1);
    assert.equal(page2[0].kind === 'episode' && page2[0].episodeId, anEpisodeId(1, PAGE_SIZE));
    assert.equal(model.getParent(page2[0]), more);
    const page3 = await model.getChildren(page2[PAGE_SIZE]);
    assert.equal(page3.length, 10);
  });

  it('shows a long run as fixed ranges of iterations, newest first', async () => {
    const { runs, model } = aRun({ iterations: 450, tasks: 1, rollouts: 1 });
    await runs.reload();
    const run = await child(model, undefined, 0);
    const ranges = await model.getChildren(run);
    assert.deepEqual(ranges.map((n) => present(n, model).label), ['Iterations 401–450', 'Iterations 201–400', 'Iterations 1–200']);
    const newest = await model.getChildren(ranges[0]);
    assert.equal(newest.length, 50);
    assert.equal(newest[0].kind === 'iteration' && newest[0].iteration, 450);
  });

  it('labels episodes with score and success, short enough for a default sidebar', async () => {
    const { runs, model } = aRun({ iterations: 4, tasks: 1, rollouts: 2 });
    await runs.reload();
    const run = await child(model, undefined, 0);
    const iteration4 = await child(model, run, 0);
    const group = await child(model, iteration4, 0);
    const [winner, loser] = await model.getChildren(group);
    const won = present(winner, model);
    assert.equal(won.label, 'Episode 0000');
    assert.equal(won.description, '✓ score 1.00 · 2 steps');
    assert.match(won.tooltip ?? '', /with memory, update off-policy/i);
    assert.deepEqual(won.icon, { id: 'lightbulb', color: 'testing.iconPassed' });
    const lost = present(loser, model);
    assert.match(lost.description ?? '', /✗ score 0\.00/);
    assert.equal(lost.icon?.color, 'testing.iconFailed');
    const row = present(iteration4, model);
    assert.equal(row.description, '1/2 ✓ · score 0.50');
    assert.match(row.tooltip ?? '', /with memory · off-policy/);
    // Every description a sidebar of the default width (~300 px, ~34 characters beside an
    // indented label) shows whole.
    for (const shown of [won, lost, row]) {
      assert.ok((shown.description ?? '').length <= 34, shown.description);
    }
  });

  it('says the successes on every iteration row, from its metrics before its episodes are loaded', () => {
    assert.equal(successText(aMetricsRecord({ iteration: 3, 'rollout/success': 0.25 }), undefined), '25% ✓');
    assert.equal(successText(undefined, [aSummary({ success: true }), aSummary({ success: false })]), '1/2 ✓');
  });

  it('follows a live run: new episodes and iterations appear under the same nodes', async () => {
    const { runs, model, host, summaries } = aRun({ iterations: 1, tasks: 1, rollouts: 2 });
    await runs.reload();
    const changed: Array<string | undefined> = [];
    model.onDidChange((node) => changed.push(node?.id));
    const run = await child(model, undefined, 0);
    const iteration1 = await child(model, run, 0);
    const group = await child(model, iteration1, 0);
    assert.equal((await model.getChildren(group)).length, 2);

    // Two more episodes of iteration 1 arrive, then iteration 2 starts.
    const late = [aSummary({ id: anEpisodeId(1, 2), group: 0, variation: 0 }), aSummary({ id: anEpisodeId(1, 3), group: 0, variation: 0 })];
    summaries.push(...late);
    host.notify(Notifications.trajectoryAdded, { seq: 5, runId: 'big', summaries: late });
    assert.ok(changed.includes(iteration1.id), 'the iteration node is refreshed');
    assert.equal((await model.getChildren(group)).length, 4);
    assert.equal(await child(model, iteration1, 0), group, 'the same node object: VS Code keeps its expansion');

    const next = aSummary({ id: anEpisodeId(2, 0), iteration: 2 });
    summaries.push(next);
    host.notify(Notifications.runState, { seq: 6, run: aRunInfo({ runId: 'big', state: 'running', live: true, iteration: 1, iterations: 5 }) });
    host.notify(Notifications.trajectoryAdded, { seq: 7, runId: 'big', summaries: [next] });
    assert.ok(changed.includes(run.id));
    const iterations = await model.getChildren(run);
    assert.deepEqual(iterations.map((n) => n.kind === 'iteration' && n.iteration), [2, 1]);
    assert.equal(iterations[1], iteration1);
    assert.deepEqual(host.violations, []);
  });

  it('shows a training run as unheard, without a spinner, while the link is down', async () => {
    const { runs, model, host } = aRun({ iterations: 1, tasks: 1, rollouts: 1 });
    await runs.reload();
    host.notify(Notifications.runState, { seq: 2, run: aRunInfo({ runId: 'big', state: 'running', live: true, iteration: 1, iterations: 5 }) });
    const run = await child(model, undefined, 0);
    assert.equal(present(run, model).icon?.id, 'sync~spin');
    const changed: Array<string | undefined> = [];
    model.onDidChange((node) => changed.push(node?.id));
    host.disconnect(); // the runs model clears `live`; the last heard state is still "running"
    assert.ok(changed.includes(undefined), 'the whole tree is refreshed');
    const shown = present(run, model);
    assert.equal(shown.icon?.id, 'debug-disconnect');
    assert.match(shown.description ?? '', /^running \(reconnecting…\)/);
  });

  it('shows a branch whose rerun finished as finished, and says what can be done with it', async () => {
    const parent = { runId: 'big', checkpoint: 3, adopted: false };
    const host = new FakeHost()
      .handle(Requests.runList, () => ({
        runs: [
          aRunInfo({ runId: 'big', state: 'finished', iteration: 3, iterations: 3 }),
          aRunInfo({ runId: 'big-branch-1', state: 'finished', iteration: 4, iterations: 3, parent }),
          aRunInfo({ runId: 'big-branch-2', state: 'stopped', iteration: 3, iterations: 3, parent }),
        ],
        roots: ['/tmp/runs'],
      }))
      .handle(Requests.runMetrics, () => ({ records: [] }))
      .handle(Requests.trajectoryList, () => ({ items: [], nextCursor: null, total: 0 }));
    const runs = new RunsModel(host);
    const model = new TrajectoryModel(host, runs);
    await runs.reload();
    const [run] = await model.getChildren(undefined);
    const [finished, stopped] = (await model.getChildren(run)).map((node) => present(node, model));
    assert.equal(finished.label, 'big-branch-1');
    assert.deepEqual(finished.icon, { id: 'pass-filled', color: 'testing.iconPassed' });
    assert.match(finished.description ?? '', /^branch of big at 3 · finished · 4( ·|$)/); // not "4/3": past the parent's total
    assert.match(finished.tooltip ?? '', /Its rerun finished: \*\*Compare with Parent\*\*.*\*\*Adopt Branch\*\*.*\*\*Delete Branch\*\*/);
    assert.equal(stopped.label, 'big-branch-2');
    assert.match(stopped.tooltip ?? '', /Its rerun was stopped before it finished: \*\*Rerun Off-Policy Update…\*\* on this branch continues it/);
    assert.ok(finished.contextValue.endsWith('.branch') && stopped.contextValue.endsWith('.branch'));
  });

  it('finds an episode\'s node (for reveal) with its ancestors', async () => {
    const { runs, model } = aRun({ iterations: 2, tasks: 3, rollouts: 2 });
    await runs.reload();
    const node = await model.episodeNode('big', anEpisodeId(2, 5), 2);
    assert.ok(node);
    const path: string[] = [];
    for (let n: TrajectoryNode | undefined = node; n; n = model.getParent(n)) {
      path.unshift(n.kind);
    }
    assert.deepEqual(path, ['run', 'iteration', 'taskGroup', 'episode']);
  });
});
