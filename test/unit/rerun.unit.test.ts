import * as assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { changeWithInterval, chartData, comparisonView, percent, points } from '../../src/rerun/comparison';
import { changeDirection, differenceInterval, wilsonInterval } from '../../src/rerun/successInterval';
import { rerunArgs } from '../../src/rerun/rerunArgs';
import { PAUSE_AND_RERUN, rerunObstacle, STOP_AND_RERUN } from '../../src/rerun/rerunGate';
import {
  checkpointDescription,
  checkpointPlaceholder,
  checkpointTime,
  editedSince,
  proposedCheckpoint,
  stepTitle,
  variationsWording,
} from '../../src/rerun/rerunSteps';
import type { BranchRerunResult, RerunResult, RunInfo } from '../../src/rpc/protocol';
import type { RunEntry } from '../../src/runs/runsModel';
import { aMetricsRecord, aRunInfo, aTip } from '../builders/protocol';

// The comparison view and the rerun command's arguments. The records are the results of a real
// rerun and dry run by the host's own code (protocol/examples/rerun.jsonl carries them), so the
// view reads the host's own field names.

const root = path.resolve(__dirname, '../../../..');

function finishedResults(): { dryRun: RerunResult; rerun: RerunResult } {
  const lines = readFileSync(path.join(root, 'protocol', 'examples', 'rerun.jsonl'), 'utf8')
    .split('\n')
    .filter((l) => l.trim())
    .map(
      (l) =>
        JSON.parse(l) as {
          message: { method?: string; params?: { dryRun: boolean; status: string; result?: RerunResult } };
        },
    );
  const finished = lines
    .map((l) => l.message)
    .filter((m) => m.method === 'update/finished' && m.params?.status === 'finished');
  const dryRun = finished.find((m) => m.params!.dryRun)!.params!.result!;
  const rerun = finished.find((m) => !m.params!.dryRun)!.params!.result!;
  return { dryRun, rerun };
}

describe('rerun comparison', () => {
  it('shows a real rerun as before/after success per variation, with the tip texts', () => {
    const { rerun } = finishedResults();
    const view = comparisonView(rerun);
    assert.equal(view.dryRun, false);
    assert.deepEqual(
      view.rows.map((r) => r.variation),
      rerun.variations,
    );
    for (const row of view.rows) {
      assert.ok(row.before >= 0 && row.before <= 1);
      assert.ok(row.after !== null && row.after >= 0 && row.after <= 1);
      assert.equal(row.change, row.after! - row.before);
    }
    assert.ok(view.tips.length >= 1 && view.tips[0].after);
    assert.ok(view.episodes.length > 0);
    assert.ok(view.facts.some(([name]) => name === 'KL to the checkpoint'));
    assert.match(view.title, /^parent-branch-1 vs parent at checkpoint 1$/);
    const [x, before, after] = chartData(view);
    assert.equal(x.length, view.rows.length);
    assert.equal(before[0], 100 * view.rows[0].before);
    assert.equal(after[0], 100 * view.rows[0].after!);
  });

  it("lists the tip edits by variation, each variation's in the order they were made", () => {
    const { rerun } = finishedResults();
    const edit = rerun.tips[0];
    const tips = [
      { ...edit, tip_id: 't9', variation_key: 'task/2' },
      { ...edit, tip_id: 't1', variation_key: 'task/1' },
      { ...edit, tip_id: 't5', variation_key: 'task/2' },
    ];
    assert.deepEqual(
      comparisonView({ ...rerun, tips }).tips.map((t) => t.tip_id),
      ['t1', 't9', 't5'],
    );
  });

  it('shows a dry run with its loss, masked tokens and ratios, and no "after"', () => {
    const { dryRun } = finishedResults();
    const view = comparisonView(dryRun);
    assert.equal(view.dryRun, true);
    assert.ok(view.rows.length >= 1 && view.rows.every((r) => r.after === null && r.change === null));
    const names = view.facts.map(([name]) => name);
    assert.ok(names.includes('loss (no step taken)') && names.includes('masked tokens'));
    assert.ok(names.some((n) => n.startsWith('importance ratio')));
  });

  it('shows a change with its episodes per side and a 95% interval, and claims no direction from 8 episodes', () => {
    const rerun = finishedResults().rerun as BranchRerunResult;
    const comparison = [{ ...rerun.comparison[0], before: 0, after: 0.375 }];
    const row = comparisonView({ ...rerun, comparison, settings: { ...rerun.settings, eval_episodes: 8 } }).rows[0];
    assert.equal(row.episodes, 8);
    assert.equal(changeWithInterval(row), '+37.5 pts [−3, +69] · 8 vs 8 episodes');
    assert.equal(row.direction, 'unclear', '0/8 → 3/8 is no established gain');
    const many = comparisonView({ ...rerun, comparison, settings: { ...rerun.settings, eval_episodes: 64 } }).rows[0];
    assert.equal(many.direction, 'up', '0/64 → 24/64 is');
  });

  it('computes Wilson and Newcombe intervals (checked against published values)', () => {
    // Newcombe (1998), table II, example (a): 56/70 vs 48/80 → [0.0524, 0.3339]; Wilson 0/10 → [0, 0.2775].
    const [lo, hi] = differenceInterval(48 / 80, 80, 56 / 70, 70);
    assert.ok(Math.abs(lo - 0.0524) < 5e-4 && Math.abs(hi - 0.3339) < 5e-4, `${lo} ${hi}`);
    const [wl, wu] = wilsonInterval(0, 10);
    assert.ok(wl === 0 && Math.abs(wu - 0.2775) < 5e-4, `${wl} ${wu}`);
    assert.equal(changeDirection([0.05, 0.3]), 'up');
    assert.equal(changeDirection([-0.3, -0.01]), 'down');
    assert.equal(changeDirection([-0.03, 0.69]), 'unclear');
    assert.equal(changeDirection(null), 'unclear');
  });

  it('formats shares and changes in points', () => {
    assert.equal(percent(0.375), '37.5%');
    assert.equal(percent(1), '100%');
    assert.equal(percent(null), '—');
    assert.equal(points(0.25), '+25 pts');
    assert.equal(points(-0.125), '−12.5 pts');
    assert.equal(points(0), '±0 pts');
    assert.equal(points(null), '—');
  });
});

describe('rerun command arguments', () => {
  it('reads a variation from a trajectory task-group node', () => {
    const args = rerunArgs({ kind: 'taskGroup', runId: 'demo', groupKey: '3:power-device/2', iteration: 4 });
    assert.equal(args.runId, 'demo');
    assert.deepEqual(args.request.variations, ['power-device/2']);
    assert.equal(args.complete, false);
  });

  it('reads the variations of one or several tips from the tips view', () => {
    const one = rerunArgs({ webviewSection: 'tip', tipId: 't000003', variationKey: 'grow-plant/1', runId: 'demo' });
    assert.deepEqual(one.request.variations, ['grow-plant/1']);
    const many = rerunArgs({ tipId: 't1', variationKey: 'a/1', variationKeys: ['a/1', 'b/2'] }, [
      { variationKey: 'c/3' },
    ]);
    assert.deepEqual(many.request.variations, ['a/1', 'b/2', 'c/3']);
  });

  it('takes a full request from a script without questions', () => {
    const args = rerunArgs({ runId: 'demo', episodes: 2, iterations: 1, dryRun: true, variations: ['a/1'] });
    assert.equal(args.complete, true);
    assert.deepEqual(args.request, { variations: ['a/1'], episodes: 2, iterations: 1, dryRun: true });
    assert.equal(rerunArgs(undefined).runId, undefined);
    assert.equal(rerunArgs('demo').runId, 'demo');
  });
});

describe('what stands in the way of a rerun, said before its first question', () => {
  function aLiveRun(state: RunInfo['state'], live = true): RunEntry {
    return {
      info: aRunInfo({ runId: 'builtin-1', state, live, iteration: 12, iterations: 40 }),
      progress: live ? { iteration: 13, phase: 'rollout', done: 3, total: 15 } : null,
      latestMetrics: null,
      trajectoryIteration: 12,
      config: undefined,
    };
  }

  it('lets a rerun go on while no run trains, and beside a paused run', () => {
    assert.equal(rerunObstacle(undefined, undefined), undefined);
    assert.equal(rerunObstacle(aLiveRun('paused'), undefined), undefined);
    assert.equal(rerunObstacle(aLiveRun('interrupted', false), undefined), undefined);
  });

  it('offers to pause or stop a training run, saying what each does', () => {
    const obstacle = rerunObstacle(aLiveRun('running'), undefined);
    assert.equal(
      obstacle?.message,
      'builtin-1 is training iteration 13. A rerun starts while no run trains, or beside a paused one.',
    );
    assert.deepEqual(obstacle?.wayOut, [PAUSE_AND_RERUN, STOP_AND_RERUN]);
    assert.match(obstacle!.detail, /keeps builtin-1 paused, untouched, while the rerun runs on its own branch/);
    assert.match(
      rerunObstacle(aLiveRun('pausing'), undefined)!.message,
      /^builtin-1 is finishing iteration 13 before it pauses\./,
    );
    assert.deepEqual(rerunObstacle(aLiveRun('stopping'), undefined)?.wayOut, []);
  });

  it('waits for a rerun already in progress (one at a time)', () => {
    const obstacle = rerunObstacle(aLiveRun('paused'), {
      runId: 'builtin-1',
      dryRun: true,
      episodes: 2,
      iterations: 1,
    });
    assert.equal(obstacle?.message, 'A dry run of builtin-1 is in progress; the host runs one at a time.');
    assert.deepEqual(obstacle?.wayOut, []);
  });
});

describe('the rerun wizard', () => {
  it('counts every question it asks, the last one included', () => {
    assert.equal(stepTitle('checkpoint', ' of run-1'), 'EMPO²: Rerun Off-Policy Update (1/5): checkpoint of run-1');
    assert.equal(stepTitle('variations'), 'EMPO²: Rerun Off-Policy Update (2/5): variations');
    assert.equal(stepTitle('dry run or rerun'), 'EMPO²: Rerun Off-Policy Update (5/5): dry run or rerun');
  });

  it('ticks the variations a person edited after the chosen checkpoint, not before it', () => {
    // A person edited grow-plant/1 during iteration 2; checkpoints 3 and 4 were taken after it.
    const records = [2, 3, 4].map((iteration) =>
      aMetricsRecord({ iteration, time: Date.parse(`2026-12-04T21:0${iteration}:00Z`) / 1000 }),
    );
    const tips = [
      aTip({ variationKey: 'grow-plant/1', version: 2, versionAuthor: 'you', updated: '2026-12-04T21:01:30Z' }),
      aTip({ variationKey: 'heat-food/4', version: 2, versionAuthor: 'Ada', updated: '2026-12-04T21:03:30Z' }),
      aTip({ variationKey: 'heat-food/2', version: 3, versionAuthor: 'policy', updated: '2026-12-04T21:04:30Z' }),
    ];
    assert.deepEqual([...editedSince(tips, checkpointTime(3, records)!)], ['heat-food/4']);
    assert.deepEqual([...editedSince(tips, checkpointTime(4, records)!)], []);
    assert.deepEqual(
      [...editedSince(tips, checkpointTime(0, records)!)].sort(),
      ['grow-plant/1', 'heat-food/4'],
      'checkpoint 0: every edit',
    );
    assert.equal(checkpointTime(5, records), undefined, 'no metrics line: unknown');
  });

  it("proposes the newest checkpoint a person's edits came after, so that they are ticked", () => {
    // Edits during iteration 3; the host kept checkpoint 2 (before them) besides the newest, 7 and 8.
    const records = [2, 7, 8].map((iteration) =>
      aMetricsRecord({ iteration, time: Date.parse(`2026-12-04T21:0${iteration}:00Z`) / 1000 }),
    );
    const tips = [
      aTip({ variationKey: 'grow-plant/0', version: 2, versionAuthor: 'you', updated: '2026-12-04T21:03:30Z' }),
    ];
    const editedAfter = (iteration: number) => editedSince(tips, checkpointTime(iteration, records)!);
    assert.equal(proposedCheckpoint([2, 7, 8], editedAfter), 2);
    assert.deepEqual([...editedAfter(2)], ['grow-plant/0'], 'ticked at checkpoint 2');
    assert.equal(checkpointDescription(false, editedAfter(2)), 'before your edits to 1 variation');
    assert.equal(checkpointDescription(true, editedAfter(8)), 'latest');
    assert.equal(
      proposedCheckpoint([2, 7, 8], () => new Set()),
      8,
      'no edit: the latest',
    );
    assert.equal(
      proposedCheckpoint([7, 8], () => undefined),
      8,
      'times unknown: the latest',
    );
  });

  it('says the same as it ticks: edited after the chosen checkpoint', () => {
    const ticked = variationsWording(3, new Set(['heat-food/4']));
    assert.equal(ticked.note, 'tips edited by a person after iteration 3');
    assert.match(ticked.placeholder, /^Ticked: the variations whose tips a person edited after iteration 3/);
    assert.match(variationsWording(4, new Set()).placeholder, /^No tip was edited by a person after iteration 4: pick/);
    assert.match(variationsWording(4, undefined).placeholder, /^None picked: the host takes/);
  });

  it('says that checkpoints older than those listed are not kept', () => {
    const at = (iteration: number) => ({
      iteration,
      path: `/runs/r/checkpoints/iter-${iteration}`,
      hasModel: true,
      latest: iteration === 4,
    });
    assert.match(checkpointPlaceholder([at(3), at(4)]), /the ones before iteration 3 are gone/);
    assert.equal(checkpointPlaceholder([at(0), at(1)]), 'The branch starts from this checkpoint');
  });
});
