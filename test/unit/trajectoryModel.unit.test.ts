import * as assert from 'node:assert/strict';
import { Notifications, Requests } from '../../src/rpc/methods';
import type { MetricsRecord, TrajectoryListParams, TrajectorySummary } from '../../src/rpc/protocol';
import { RunsModel } from '../../src/runs/runsModel';
import { successText, present } from '../../src/trajectories/presentation';
import { TrajectoryModel } from '../../src/trajectories/trajectoryModel';
import {
  PAGE_SIZE,
  TrajectoryNodes,
  ownerOf,
  type MoreNode,
  type TrajectoryNode,
} from '../../src/trajectories/trajectoryNodes';
import { FakeHost } from '../builders/fakeHost';
import { aMetricsRecord, anEpisode, anEpisodeId, aRunInfo, aStep, aSummary } from '../builders/protocol';

// The Trajectories tree's data, against a fake host whose run has `iterations` × `tasks` ×
// `rollouts` episodes; the host answers trajectory.list like the real one (filter, cursor, limit).

function aRun(options: {
  iterations: number;
  tasks: number;
  rollouts: number;
  configured?: number;
  steps?: number;
  metrics?: MetricsRecord[];
}) {
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
      runs: [
        aRunInfo({ runId: 'big', iteration: options.iterations, iterations: options.configured ?? options.iterations }),
      ],
      roots: ['/home/ada/project/.empo2/runs'],
    }))
    .handle(Requests.runMetrics, () => ({
      records: options.metrics ?? [
        aMetricsRecord({
          iteration: 1,
          rollout_mode: 'memory',
          update_mode: 'on-policy-with-tips',
          'rollout/return': 0.5,
        }),
      ],
    }))
    .handle(Requests.trajectoryList, (params: TrajectoryListParams) => {
      const matching = summaries.filter(
        (s) => params.filter?.iteration === undefined || s.iteration === params.filter.iteration,
      );
      const start = params.cursor ? Number(params.cursor.slice(1)) : 0;
      const limit = params.limit ?? 100;
      const items = matching.slice(start, start + limit);
      const end = start + items.length;
      return { items, nextCursor: end < matching.length ? `o${end}` : null, total: matching.length };
    })
    .handle(Requests.trajectoryGet, ({ episodeId }) => ({
      episode: anEpisode({
        ...summaries.find((s) => s.id === episodeId)!,
        steps: Array.from({ length: options.steps ?? 3 }, (_, t) =>
          aStep({ t, action: `act ${t}`, executed_action: `act ${t}` }),
        ),
      }),
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
    assert.deepEqual(
      iterations.map((n) => n.kind === 'iteration' && n.iteration),
      [3, 2, 1],
    );
    const groups = await model.getChildren(iterations[2]);
    assert.equal(groups.length, 2);
    const episodes = await model.getChildren(groups[1]);
    assert.equal(episodes.length, 4);
    assert.deepEqual(
      episodes.map((n) => n.kind === 'episode' && n.episodeId),
      ['i000001-e0004', 'i000001-e0005', 'i000001-e0006', 'i000001-e0007'],
    );
    const steps = await model.getChildren(episodes[0]);
    assert.deepEqual(
      steps.map((n) => present(n, model).label),
      ['t0: act 0', 't1: act 1', 't2: act 2'],
    );
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
    assert.deepEqual(
      ranges.map((n) => present(n, model).label),
      ['Iterations 401–450', 'Iterations 201–400', 'Iterations 1–200'],
    );
    const newest = await model.getChildren(ranges[0]);
    assert.equal(newest.length, 50);
    assert.equal(newest[0].kind === 'iteration' && newest[0].iteration, 450);
  });

  it('labels episodes with score and success, their essentials whole at a default sidebar width', async () => {
    const { runs, model } = aRun({ iterations: 4, tasks: 1, rollouts: 2 });
    await runs.reload();
    const run = await child(model, undefined, 0);
    const iteration4 = await child(model, run, 0);
    const group = await child(model, iteration4, 0);
    const [winner, loser] = await model.getChildren(group);
    const won = present(winner, model);
    assert.equal(won.label, 'Episode 0000');
    assert.equal(won.description, '✓ score 1.00');
    assert.match(won.tooltip ?? '', /Rollout with memory, update off-policy, 2 steps/);
    assert.match(won.tooltip ?? '', /lightbulb, rollout with memory; dot, memory-free/, 'the icon explained');
    assert.deepEqual(won.icon, { id: 'lightbulb', color: 'testing.iconPassed' });
    const lost = present(loser, model);
    assert.equal(lost.description, '✗ score 0.00');
    assert.equal(lost.icon?.color, 'testing.iconFailed');
    const row = present(iteration4, model);
    assert.equal(row.description, '50% ✓ · score 0.50 · with memory');
    assert.match(row.tooltip ?? '', /Rollout: with memory \(the lightbulb icon; memory-free rollouts have a circle\)/);
    assert.match(row.tooltip ?? '', /Update: off-policy/);
    assert.match(row.tooltip ?? '', /Succeeded: 50% \(1 of 2 episodes\)/);
    // What a default sidebar (300 px) shows of a row, label and description together, before
    // VS Code cuts it: about 36 characters at the top level, 2 fewer per level of indent. The
    // essential part (up to the first " · ") must fit: "Episode 0011 ✓ score 100 · 1…" was cut.
    const fits = (shown: { label: string; description?: string }, depth: number) =>
      assert.ok(
        `${shown.label} ${(shown.description ?? '').split(' · ')[0]}`.length <= 36 - 2 * depth,
        `${shown.label} ${shown.description}`,
      );
    fits(won, 3);
    fits(lost, 3);
    fits(row, 1);
    assert.ok(`${won.label} ${won.description}`.length <= 36 - 2 * 3, 'an episode row whole');
  });

  it('says the successes on every iteration row one way, whether its episodes are loaded or not', async () => {
    assert.equal(successText(aMetricsRecord({ iteration: 3, 'rollout/success': 0.25 }), undefined), '25% ✓');
    assert.equal(
      successText(undefined, [aSummary({ success: true }), aSummary({ success: false }), aSummary({ success: false })]),
      '33% ✓',
    );
    // A row labelled from the metrics reads the same once expanded (its episodes loaded).
    const metrics = [1, 2].map((iteration) =>
      aMetricsRecord({
        iteration,
        rollout_mode: 'memory-free',
        update_mode: 'on-policy',
        'rollout/return': 0.25,
        'rollout/success': 0.25,
      }),
    );
    const { runs, model } = aRun({ iterations: 2, tasks: 1, rollouts: 4, metrics });
    await runs.reload();
    const run = await child(model, undefined, 0);
    const [iteration2, iteration1] = await model.getChildren(run);
    await settle(); // run.metrics answered
    assert.equal(present(iteration2, model).description, '25% ✓ · score 0.25 · memory-free', 'from the metrics');
    await model.getChildren(iteration2); // expanded: its 4 episodes (1 succeeded) are loaded
    assert.equal(
      present(iteration2, model).description,
      '25% ✓ · score 0.25 · memory-free',
      'as its neighbours say it, not "1/4 ✓"',
    );
    assert.equal(present(iteration1, model).description, '25% ✓ · score 0.25 · memory-free');
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
    const late = [
      aSummary({ id: anEpisodeId(1, 2), group: 0, variation: 0 }),
      aSummary({ id: anEpisodeId(1, 3), group: 0, variation: 0 }),
    ];
    summaries.push(...late);
    host.notify(Notifications.trajectoryAdded, { seq: 5, runId: 'big', summaries: late });
    assert.ok(changed.includes(iteration1.id), 'the iteration node is refreshed');
    assert.equal((await model.getChildren(group)).length, 4);
    assert.equal(await child(model, iteration1, 0), group, 'the same node object: VS Code keeps its expansion');

    const next = aSummary({ id: anEpisodeId(2, 0), iteration: 2 });
    summaries.push(next);
    host.notify(Notifications.runState, {
      seq: 6,
      run: aRunInfo({ runId: 'big', state: 'running', live: true, iteration: 1, iterations: 5 }),
    });
    host.notify(Notifications.trajectoryAdded, { seq: 7, runId: 'big', summaries: [next] });
    assert.ok(changed.includes(run.id));
    const iterations = await model.getChildren(run);
    assert.deepEqual(
      iterations.map((n) => n.kind === 'iteration' && n.iteration),
      [2, 1],
    );
    assert.equal(iterations[1], iteration1);
    assert.deepEqual(host.violations, []);
  });

  it('shows a training run as unheard, without a spinner, while the link is down', async () => {
    const { runs, model, host } = aRun({ iterations: 1, tasks: 1, rollouts: 1 });
    await runs.reload();
    host.notify(Notifications.runState, {
      seq: 2,
      run: aRunInfo({ runId: 'big', state: 'running', live: true, iteration: 1, iterations: 5 }),
    });
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

  it('shows a run the host was stopping as unheard, without a spinner, once the host process has exited', async () => {
    // Ctrl-C in run.sh's terminal: the host's last word was "stopping", then its process ended.
    const { runs, model, host } = aRun({ iterations: 1, tasks: 1, rollouts: 1 });
    await runs.reload();
    host.notify(Notifications.runState, {
      seq: 2,
      run: aRunInfo({ runId: 'big', state: 'stopping', live: true, iteration: 1, iterations: 5 }),
    });
    const run = await child(model, undefined, 0);
    assert.equal(present(run, model).icon?.id, 'loading~spin');
    host.disconnect(true);
    const shown = present(run, model);
    assert.equal(shown.icon?.id, 'debug-disconnect');
    assert.match(shown.description ?? '', /^stopping \(no host\)/);
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
        roots: ['/home/ada/project/.empo2/runs'],
      }))
      .handle(Requests.runMetrics, () => ({ records: [] }))
      .handle(Requests.trajectoryList, () => ({ items: [], nextCursor: null, total: 0 }));
    const runs = new RunsModel(host);
    const model = new TrajectoryModel(host, runs);
    await runs.reload();
    const [run] = await model.getChildren(undefined);
    // A run's row says its state alone: after a long id anything more made the ellipsis eat it.
    assert.equal(present(run, model).description, 'finished');
    assert.match(present(run, model).tooltip ?? '', /State: finished, 3\/3 iterations done/);
    const [finished, stopped] = (await model.getChildren(run)).map((node) => present(node, model));
    // Under its parent, named by what its id adds: the whole id left no room for its state.
    assert.equal(finished.label, 'branch-1');
    assert.match(finished.tooltip ?? '', /^\*\*Run\*\* big-branch-1\n/);
    assert.deepEqual(finished.icon, { id: 'pass-filled', color: 'testing.iconPassed' });
    // The state first (it is what a person scans for), then that it is a branch.
    assert.equal(finished.description, 'finished · branch of big at 3');
    assert.match(finished.tooltip ?? '', /State: finished, 4 iterations done/); // not "4/3": past the parent's total
    assert.match(finished.tooltip ?? '', /Branch of big at its checkpoint 3/);
    assert.match(
      finished.tooltip ?? '',
      /Its rerun finished: \*\*Compare with Parent\*\*.*\*\*Adopt Branch\*\*.*\*\*Delete Branch\*\*/,
    );
    assert.equal(stopped.label, 'branch-2');
    assert.match(
      stopped.tooltip ?? '',
      /Its rerun was stopped before it finished: \*\*Rerun Off-Policy Update…\*\* on this branch continues it/,
    );
    assert.ok(finished.contextValue.endsWith('.branch') && stopped.contextValue.endsWith('.branch'));
  });

  it("finds an episode's node (for reveal) with its ancestors", async () => {
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

const settle = () => new Promise((resolve) => setImmediate(resolve));
const labels = (nodes: readonly TrajectoryNode[], model: TrajectoryModel) => nodes.map((n) => present(n, model).label);

describe('TrajectoryModel, following changes', () => {
  it("refreshes the whole tree when the run list changes, and a run's node only once the tree shows it", async () => {
    const { runs, model, host } = aRun({ iterations: 1, tasks: 1, rollouts: 1 });
    await runs.reload();
    const changed: Array<string | undefined> = [];
    model.onDidChange((node) => changed.push(node?.id));
    host.notify(Notifications.runState, {
      seq: 1,
      run: aRunInfo({ runId: 'big', iteration: 1, iterations: 1, state: 'stopped' }),
    });
    assert.deepEqual(changed, [], 'no node of the run yet: nothing to refresh');
    const run = await child(model, undefined, 0);
    host.notify(Notifications.runState, {
      seq: 2,
      run: aRunInfo({ runId: 'big', iteration: 1, iterations: 1, state: 'finished' }),
    });
    assert.deepEqual(changed, [run.id]);
    host.notify(Notifications.runState, { seq: 3, run: aRunInfo({ runId: 'new-run' }) });
    assert.deepEqual(changed, [run.id, undefined], 'a new run: the list changed');
  });

  it('labels iterations from run/metrics as records arrive', async () => {
    const { runs, model, host } = aRun({ iterations: 2, tasks: 1, rollouts: 1 });
    await runs.reload();
    const run = await child(model, undefined, 0);
    const [iteration2] = await model.getChildren(run);
    await settle(); // run.metrics answered
    assert.equal(model.iterationMetrics('big', 2), undefined);
    const changed: Array<string | undefined> = [];
    model.onDidChange((node) => changed.push(node?.id));
    host.notify(Notifications.runMetrics, {
      seq: 1,
      runId: 'big',
      records: [aMetricsRecord({ iteration: 2, update_mode: 'off-policy' })],
    });
    assert.equal(model.iterationMetrics('big', 2)?.update_mode, 'off-policy');
    assert.ok(changed.includes(iteration2.id));
  });

  it('forgets the pages it read when a host connects', async () => {
    const { runs, model, host } = aRun({ iterations: 1, tasks: 1, rollouts: 1 });
    await runs.reload();
    const iteration = await child(model, await child(model, undefined, 0), 0);
    await model.getChildren(iteration);
    const changed: Array<string | undefined> = [];
    model.onDidChange((node) => changed.push(node?.id));
    host.connect();
    assert.ok(changed.includes(undefined));
    await model.getChildren(iteration);
    assert.equal(host.callsOf('trajectory.list').length, 2, 'read again from the new host');
  });

  it("refreshes the runs' icons when the link goes down or comes back, not on every health change", async () => {
    const { runs, model, host } = aRun({ iterations: 1, tasks: 1, rollouts: 1 });
    await runs.reload();
    const changed: Array<string | undefined> = [];
    model.onDidChange((node) => changed.push(node?.id));
    const down = { since: 0, remote: false, url: 'ws://fake', attempts: 1 };
    host.health.set({ kind: 'reconnecting', ...down });
    assert.deepEqual(changed, [undefined]);
    assert.equal(model.linkDown, true);
    host.health.set({ kind: 'lost', ...down }); // still down
    assert.deepEqual(changed, [undefined]);
    host.health.set({ kind: 'connected', since: 1, remote: false, url: 'ws://fake' });
    assert.deepEqual(changed, [undefined, undefined]);
    assert.equal(model.linkDown, false);
  });
});

describe('TrajectoryModel, the shape of long and odd runs', () => {
  it('shows a branch at the top when its parent is not listed, and under its parent when it is', async () => {
    const host = new FakeHost()
      .handle(Requests.runList, () => ({
        runs: [
          aRunInfo({ runId: 'base', updated: 3 }),
          aRunInfo({ runId: 'base-branch-1', updated: 2, parent: { runId: 'base', checkpoint: 1, adopted: false } }),
          aRunInfo({ runId: 'orphan-branch', updated: 1, parent: { runId: 'deleted', checkpoint: 1, adopted: false } }),
        ],
        roots: ['/home/ada/project/.empo2/runs'],
      }))
      .handle(Requests.runMetrics, () => ({ records: [] }));
    const runs = new RunsModel(host);
    const model = new TrajectoryModel(host, runs);
    await runs.reload();
    const top = await model.getChildren();
    assert.deepEqual(labels(top, model), ['base', 'orphan-branch']);
    assert.deepEqual(labels(await model.getChildren(top[0]), model).slice(0, 1), ['branch-1']);
  });

  it('has no children under a step, nor under a node whose run or iteration it no longer knows', async () => {
    const { runs, model, host } = aRun({ iterations: 1, tasks: 1, rollouts: PAGE_SIZE + 5 });
    await runs.reload();
    const run = await child(model, undefined, 0);
    const group = await child(model, await child(model, run, 0), 0);
    const more = (await model.getChildren(group))[PAGE_SIZE] as MoreNode;
    const episode = await child(model, group, 0);
    const step = await child(model, episode, 0);
    assert.deepEqual(await model.getChildren(step), []);
    assert.equal(model.step(step as Extract<TrajectoryNode, { kind: 'step' }>)?.t, 0);
    model.clear(); // Refresh: VS Code may still ask about nodes it showed
    assert.equal(model.step(step as Extract<TrajectoryNode, { kind: 'step' }>), undefined);
    assert.equal(model.group(group as Extract<TrajectoryNode, { kind: 'taskGroup' }>), undefined);
    assert.deepEqual(await model.getChildren(group), []);
    assert.equal(model.remaining(more), 0); // not a negative count
    host.handle(Requests.runList, () => ({ runs: [], roots: ['/home/ada/project/.empo2/runs'] })); // the run was deleted
    await runs.reload();
    assert.deepEqual(await model.getChildren(run), []);
    assert.equal(model.iterationCount('big'), 0);
  });

  it('pages many task groups and long episodes behind "more" nodes that say what they hold', async () => {
    const { runs, model } = aRun({ iterations: 1, tasks: PAGE_SIZE + 5, rollouts: 1, steps: PAGE_SIZE + 3 });
    await runs.reload();
    const iteration = await child(model, await child(model, undefined, 0), 0);
    const groups = await model.getChildren(iteration);
    assert.equal(groups.length, PAGE_SIZE + 1);
    const moreGroups = groups[PAGE_SIZE] as MoreNode;
    assert.equal(present(moreGroups, model).label, '5 more task groups…');
    const lastGroups = await model.getChildren(moreGroups);
    assert.equal(lastGroups.length, 5);
    assert.ok(lastGroups.every((n) => n.kind === 'taskGroup' && n.parent === moreGroups));
    const episode = await child(model, lastGroups[4], 0);
    assert.equal(episode.kind === 'episode' && episode.episodeId, anEpisodeId(1, PAGE_SIZE + 4));
    const steps = await model.getChildren(episode);
    const moreSteps = steps[PAGE_SIZE] as MoreNode;
    assert.equal(present(moreSteps, model).label, '3 more steps…');
    assert.deepEqual(labels(await model.getChildren(moreSteps), model), [
      `t${PAGE_SIZE}: act ${PAGE_SIZE}`,
      `t${PAGE_SIZE + 1}: act ${PAGE_SIZE + 1}`,
      `t${PAGE_SIZE + 2}: act ${PAGE_SIZE + 2}`,
    ]);
    model.clear(); // Refresh: "more" nodes VS Code showed may still be asked about
    assert.equal(model.remaining(moreGroups), 0); // not a negative count
    assert.equal(present(moreSteps, model).label, '0 more steps…');
  });

  it('has nothing under the "more" node of a group whose iteration it no longer holds', async () => {
    const { runs, model } = aRun({ iterations: 1, tasks: 1, rollouts: PAGE_SIZE + 5 });
    await runs.reload();
    const group = await child(model, await child(model, await child(model, undefined, 0), 0), 0);
    const more = (await model.getChildren(group))[PAGE_SIZE];
    assert.equal((await model.getChildren(more)).length, 5);
    model.clear();
    assert.deepEqual(await model.getChildren(more), []);
  });

  it("finds an episode's node past the first pages, as the very node the tree shows, labelled as the tree labels it", async () => {
    const { runs, model } = aRun({ iterations: 1, tasks: PAGE_SIZE + 5, rollouts: 1 });
    await runs.reload();
    // Asked before the tree was expanded: reveal() of an episode in the last task group.
    const found = await model.episodeNode('big', anEpisodeId(1, PAGE_SIZE + 3), 1);
    const moreGroups = found!.parent!.parent as MoreNode;
    assert.equal(present(moreGroups, model).label, '5 more task groups…');
    const iteration = await child(model, await child(model, undefined, 0), 0);
    assert.equal((await model.getChildren(iteration))[PAGE_SIZE], moreGroups);
    assert.equal(await child(model, await child(model, moreGroups, 3), 0), found);
    assert.equal(
      await model.episodeNode('big', 'i000001-e9999', 1),
      undefined,
      'an episode the iteration does not have',
    );
  });

  it('finds episodes on every page of a long group, at the page edges too', async () => {
    const { runs, model } = aRun({ iterations: 1, tasks: 1, rollouts: PAGE_SIZE * 2 + 10 });
    await runs.reload();
    const found = new Map<number, TrajectoryNode | undefined>();
    for (const index of [PAGE_SIZE - 1, PAGE_SIZE, PAGE_SIZE + 50, PAGE_SIZE * 2 + 5]) {
      found.set(index, await model.episodeNode('big', anEpisodeId(1, index), 1));
    }
    const moreEpisodes = found.get(PAGE_SIZE)!.parent as MoreNode;
    assert.equal(present(moreEpisodes, model).label, `${PAGE_SIZE + 10} more episodes…`);
    const group = await child(model, await child(model, await child(model, undefined, 0), 0), 0);
    const page1 = await model.getChildren(group);
    const page2 = await model.getChildren(page1[PAGE_SIZE]);
    const page3 = await model.getChildren(page2[PAGE_SIZE]);
    assert.equal(found.get(PAGE_SIZE - 1), page1[PAGE_SIZE - 1]);
    assert.equal(found.get(PAGE_SIZE), page2[0]);
    assert.equal(found.get(PAGE_SIZE + 50), page2[50]);
    assert.equal(found.get(PAGE_SIZE * 2 + 5), page3[5]);
  });

  it('finds an episode of a long run under the range the tree shows it in', async () => {
    const { runs, model } = aRun({ iterations: 450, tasks: 1, rollouts: 1 });
    await runs.reload();
    const ranges = await model.getChildren(await child(model, undefined, 0));
    const rangeOf = async (iteration: number) =>
      (await model.episodeNode('big', anEpisodeId(iteration, 0), iteration))?.parent?.parent?.parent;
    assert.equal(await rangeOf(450), ranges[0]);
    assert.equal(await rangeOf(401), ranges[0]);
    assert.equal(await rangeOf(400), ranges[1]);
    assert.equal(await rangeOf(201), ranges[1]);
    assert.equal(await rangeOf(200), ranges[2]);
    assert.equal(await rangeOf(1), ranges[2]);
  });

  it('uses ranges from PAGE_SIZE + 1 iterations, done or configured, with no empty range', async () => {
    const shape = async (iterations: number, configured = iterations) => {
      const { runs, model } = aRun({ iterations, tasks: 1, rollouts: 1, configured });
      await runs.reload();
      const top = await model.getChildren(await child(model, undefined, 0));
      return {
        shown: top.every((n) => n.kind === 'iteration') ? `${top.length} iterations` : labels(top, model),
        model,
        top,
      };
    };
    assert.equal((await shape(PAGE_SIZE)).shown, `${PAGE_SIZE} iterations`);
    assert.deepEqual((await shape(PAGE_SIZE * 2)).shown, ['Iterations 201–400', 'Iterations 1–200']);
    const growing = await shape(150, 450); // 150 done of 450: ranges from the start, so none moves later
    assert.deepEqual(growing.shown, ['Iterations 1–150'], 'labelled with the iterations it has');
    assert.equal((await growing.model.getChildren(growing.top[0])).length, 150);
  });

  it("labels a run's iterations from run.metrics up to 5,000 iterations, not beyond", async () => {
    for (const [iterations, reads] of [
      [5_000, 1],
      [5_001, 0],
    ]) {
      const { runs, model, host } = aRun({ iterations, tasks: 1, rollouts: 1 });
      await runs.reload();
      await model.getChildren(await child(model, undefined, 0));
      assert.equal(host.callsOf('run.metrics').length, reads, `${iterations} iterations`);
    }
  });
});

describe('TrajectoryNodes', () => {
  it('gives the "more" nodes of different owners different ids, and a page\'s "more" node the owner\'s id', () => {
    const nodes = new TrajectoryNodes();
    const iteration = nodes.iteration(nodes.run('r'), 1);
    const group = nodes.group(iteration, iteration, 'power-device/0');
    const moreGroups = nodes.more(iteration, PAGE_SIZE, 'task groups');
    const moreEpisodes = nodes.more(group, PAGE_SIZE, 'episodes');
    assert.notEqual(moreGroups, moreEpisodes);
    assert.notEqual(moreGroups.id, moreEpisodes.id);
    const nextEpisodes = nodes.more(moreEpisodes, PAGE_SIZE * 2, 'episodes');
    assert.equal(ownerOf(nextEpisodes), group);
    assert.equal(nodes.pageParent(group, PAGE_SIZE * 2, 'episodes'), nextEpisodes);
    assert.equal(nodes.pageParent(group, PAGE_SIZE - 1, 'episodes'), group);
    // Two groups of one iteration, each with a second page: one "more" node each.
    const other = nodes.group(iteration, iteration, 'power-device/1');
    const otherMore = nodes.more(other, PAGE_SIZE, 'episodes');
    assert.notEqual(otherMore, moreEpisodes);
    assert.equal(ownerOf(otherMore), other);
  });
});
