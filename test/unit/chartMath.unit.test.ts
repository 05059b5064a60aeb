import * as assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { formatReturn, SCORE, SCORE_MAX, SCORE_MIN, SCORE_SCALE } from '../../src/common/quantities';
import { appendRecords, CHARTS, emptyColumns } from '../../src/runs/metricsCharts';
import { SCORE as TREE_SCORE } from '../../src/trajectories/presentation';
import {
  beyondAxis,
  clipNote,
  hasData,
  latestReadings,
  markerOf,
  readingsAt,
  readingsText,
  readingValue,
  RobustAxis,
  robustRange,
  showPoints,
  spanRange,
  tickLabels,
  valueRange,
  axisWidth,
  Y_AXIS_WIDTH,
} from '../../webview/metrics/metrics-chart/chartMath';
import { aMetricsRecord } from '../builders/protocol';

const chart = (id: string) => CHARTS.find((c) => c.id === id)!;

describe('metrics chart maths', () => {
  describe('a single point', () => {
    it('gets an axis around it, not one 0 wide', () => {
      assert.deepEqual(spanRange(1, 1), [0.9, 1.1]);
      assert.deepEqual(spanRange(0, 0), [-1, 1]);
      assert.deepEqual(spanRange(1, 5), [1, 5]);
    });

    it('gets a y axis around it too: flat, and 0 in the middle of −1..1', () => {
      assert.deepEqual(valueRange(0, 0), [-1, 1]);
      const [low, high] = valueRange(25, 25);
      assert.ok(low < 25 && high > 25 && Math.abs((low + high) / 2 - 25) < 1e-9);
      assert.deepEqual(valueRange(1, 5), [1, 5], 'real spread is drawn as it is');
      assert.deepEqual(valueRange(-1e-13, 2e-13), [-1, 1], 'float noise around 0 is 0');
    });

    it('is drawn as a marker, however wide the chart (a line through one point draws nothing)', () => {
      assert.equal(showPoints([0.5], 0, 0, 400, 10), true);
      assert.equal(showPoints([null, null, 0.5, null], 0, 3, 1, 10), true);
    });

    it('dense lines get no markers, sparse ones do', () => {
      const dense = Array.from({ length: 1_000 }, (_, i) => i);
      assert.equal(showPoints(dense, 0, 999, 400, 10), false);
      assert.equal(showPoints(dense.slice(0, 5), 0, 4, 400, 10), true);
    });
  });

  describe('tick labels', () => {
    it('never repeat (uPlot kept 3 decimals: 0.0025 and 0.003 both read "0.003")', () => {
      const labels = tickLabels([0.002, 0.0025, 0.003, 0.0035], 0.0005);
      assert.deepEqual(labels, ['0.0020', '0.0025', '0.0030', '0.0035']);
    });

    it('stay distinct for every step uPlot picks, small and large', () => {
      for (const [start, step] of [
        [0, 1e-7],
        [1, 1e-4],
        [0.97, 0.01],
        [0, 0.25],
        [-2, 0.5],
        [1e6, 2e5],
        [0, 5],
      ] as const) {
        const splits = Array.from({ length: 6 }, (_, i) => start + i * step);
        const labels = tickLabels(splits, step);
        assert.equal(new Set(labels).size, labels.length, `${start} + k·${step}: ${labels.join(', ')}`);
      }
    });

    it('draw floating-point noise flat, with short labels that are not cut', () => {
      // The masked-token fraction of two iterations whose float sums differ by 1e-11.
      const values = [0.012345678900233, 0.012345678910233];
      const [low, high] = valueRange(Math.min(...values), Math.max(...values));
      assert.ok(low <= values[0] && high >= values[1]);
      const drawn = (values[1] - values[0]) / (high - low);
      assert.ok(drawn < 1e-6, `the noise takes ${drawn} of the plot's height: it reads as flat`);
      // uPlot's ticks: about 5 over the axis, at 1, 2 or 5 × 10^k.
      const rough = (high - low) / 5;
      const decade = 10 ** Math.floor(Math.log10(rough));
      const step = [1, 2, 5, 10].map((m) => m * decade).find((candidate) => candidate >= rough)!;
      const splits = Array.from({ length: 6 }, (_, i) => Math.ceil(low / step) * step + i * step).filter(
        (v) => v <= high,
      );
      const labels = tickLabels(splits, step);
      assert.ok(
        labels.every((label) => label.length <= 7),
        labels.join(', '),
      );
      assert.equal(new Set(labels).size, labels.length);
      // An axis as wide as its widest label (here 6.5 px a character): nothing cut, whatever the labels.
      const perChar = (label: string) => 6.5 * label.length;
      assert.equal(axisWidth(labels, perChar), Y_AXIS_WIDTH, 'short labels keep the usual width, so plots line up');
      const long = ['1.2345678900233e-4', '1.2345678900234e-4'];
      assert.ok(axisWidth(long, perChar) >= perChar(long[0]) + 15, 'a long label gets the room it needs');
    });

    it('write whole steps without decimals and no "-0"', () => {
      assert.deepEqual(tickLabels([-0, 10, 20, null], 10), ['0', '10', '20', '']);
    });
  });

  describe('outliers', () => {
    // Importance ratios of 20 iterations: means and minimums near 1, one max of 800.
    const mean = Array.from({ length: 20 }, (_, i) => 1 + 0.01 * Math.sin(i));
    const min = mean.map((v) => v - 0.2);
    const max = mean.map((v, i) => (i === 12 ? 800 : v + 0.3));

    it('a spike is clipped off the axis, which keeps the means and minimums readable', () => {
      const range = robustRange([mean, min, max])!;
      assert.ok(range, 'clipped');
      assert.ok(range[1] < 5 && range[1] >= 1.3, `top ${range[1]}`);
      assert.equal(range[0], Math.min(...min), 'nothing is clipped below');
      assert.deepEqual(beyondAxis(max, range), { above: [12], below: [] });
      assert.equal(
        clipNote(
          [mean, min, max],
          [mean, min, max].map((v) => beyondAxis(v, range)),
        ),
        '▲ 1 point above the axis (up to 800)',
      );
    });

    it('nothing is clipped without outliers, or with too few points to tell', () => {
      assert.equal(robustRange([mean, min, mean.map((v) => v + 0.3)]), undefined);
      assert.equal(robustRange([[1, 800]]), undefined);
    });

    it('a flat series keeps a small real wobble on the axis', () => {
      const flat = Array.from({ length: 30 }, (_, i) => (i === 7 ? 1.02 : 1));
      const range = robustRange([flat, [...flat.slice(1), 900]])!;
      assert.ok(range[1] >= 1.02 && range[1] < 2, `top ${range[1]}`);
    });

    it('a live run: a spike in a new row is clipped at once, between recomputations of the fences', () => {
      const columns = { mean: mean.slice(0, 10), max: max.slice(0, 10) };
      const axis = new RobustAxis();
      assert.equal(axis.update(columns, [columns.mean, columns.max], 10), undefined);
      columns.mean.push(1);
      columns.max.push(900);
      const range = axis.update(columns, [columns.mean, columns.max], 11)!;
      assert.ok(range && range[1] < 5, 'clipped at the next row');
      // Columns replaced (another run): read afresh.
      assert.equal(axis.update({}, [mean.slice(0, 10)], 10), undefined);
    });

    it('the importance-ratio charts clip their outliers', () => {
      assert.equal(chart('ratio').clipOutliers, true);
      assert.equal(chart('off-policy').clipOutliers, true);
      assert.equal(chart('return').clipOutliers, undefined);
    });
  });

  describe('evaluation points', () => {
    it('two equal points of one chart stay visible: a dot inside a ring, rings inside rings', () => {
      const markers = [0, 1, 2].map(markerOf);
      assert.equal(markers[0].filled, true);
      for (let i = 1; i < markers.length; i++) {
        const inside = markers[i].size - 2 * markers[i].width;
        assert.equal(markers[i].filled, false);
        assert.ok(
          inside > markers[i - 1].size,
          `ring ${i} (inside ${inside}) clears marker ${i - 1} (${markers[i - 1].size})`,
        );
      }
    });
  });

  describe('the header', () => {
    it('shows every series of the chart from the latest iteration, labelled', () => {
      const columns = appendRecords(emptyColumns(), [
        aMetricsRecord({
          iteration: 7,
          rollout_mode: 'memory',
          'rollout/return': 20,
          'rollout/memory/return': 20,
          'rollout/memory_free/return': null,
        }),
        aMetricsRecord({
          iteration: 8,
          rollout_mode: 'memory-free',
          'rollout/return': 25.5,
          'rollout/memory_free/return': 25.5,
        }),
      ]);
      const readings = latestReadings(chart('return'), columns)!;
      assert.equal(readings.iteration, 8);
      assert.deepEqual(
        readings.readings.map((r) => [r.label, r.value]),
        [
          ['all rollouts', 25.5],
          ['memory-free', 25.5],
          ['with memory', undefined],
        ],
      );
      // The other mode's figure is there, said to be from its own iteration.
      assert.equal(
        readingsText(readings),
        'iteration 8 · all rollouts 25.5 · memory-free 25.5 · with memory – (20 at 7)',
      );
      // A score reads as the tree and the status bar write it.
      assert.equal(
        readingsText(readings, chart('return').format),
        'iteration 8 · all rollouts 25.5 · memory-free 25.5 · with memory – (20.0 at 7)',
      );
      assert.equal(chart('return').format?.(0), formatReturn(0));
      // On the environment-steps axis the header names that x.
      assert.match(readingsText(readings, undefined, 'environment steps'), /^environment steps 8 · all rollouts/);
    });

    it('an evaluation not run in the latest iteration says so, with the one it last had', () => {
      const columns = appendRecords(emptyColumns(), [
        aMetricsRecord({
          iteration: 5,
          'eval/memory_free/success': 0.5,
          'eval/memory/success': 0.75,
          'rollout/success': 0.25,
        }),
        aMetricsRecord({ iteration: 6, 'rollout/success': 0.5 }),
      ]);
      assert.equal(
        readingsText(latestReadings(chart('success'), columns)),
        'iteration 6 · eval memory-free – (0.500 at 5) · eval with memory – (0.750 at 5) · training rollouts 0.500',
      );
    });

    it('is empty before the first iteration', () => {
      assert.equal(readingsText(latestReadings(chart('return'), emptyColumns())), '');
    });

    it('under the cursor, shows the hovered iteration (or the nearest earlier one with a value)', () => {
      const columns = appendRecords(emptyColumns(), [
        aMetricsRecord({ iteration: 1, 'update/masked_fraction': 0.5 }),
        aMetricsRecord({ iteration: 2 }),
        aMetricsRecord({ iteration: 3, 'update/masked_fraction': 0.25 }),
      ]);
      assert.deepEqual(readingsAt(chart('masked'), columns, 0), {
        iteration: 1,
        readings: [{ label: 'masked', value: 0.5 }],
      });
      assert.equal(readingsAt(chart('masked'), columns, 1)?.iteration, 1, 'iteration 2 has none: the one before');
      assert.equal(readingsAt(chart('masked'), columns, 99)?.iteration, 3);
      assert.equal(readingValue({ label: 'x', value: 25 }, chart('return').format), '25.0');
      assert.equal(readingValue({ label: 'x', value: undefined }), '–');
      assert.equal(
        readingValue({ label: 'x', value: undefined, earlier: { iteration: 7, value: 20 } }, chart('return').format),
        '– (20.0 at 7)',
      );
    });

    it('a chart none of whose series has a value has no data (it draws no axes)', () => {
      const columns = appendRecords(emptyColumns(), [aMetricsRecord({ iteration: 1, 'rollout/return': 0 })]);
      assert.equal(hasData(chart('return'), columns), true, 'a score of 0 is data');
      assert.equal(hasData(chart('off-policy'), columns), false);
      assert.equal(hasData(chart('return'), emptyColumns()), false);
    });
  });

  describe('one name per quantity', () => {
    it('the mean final score is called score, with its scale, as in the tree and the episode view', () => {
      assert.equal(TREE_SCORE, SCORE);
      assert.match(chart('return').title, new RegExp(`\\b${SCORE}\\b`));
      assert.equal(chart('return').unit, SCORE_SCALE);
    });

    it('the scale it states is the scores the host gives: −100 (a failed ScienceWorld task) to 100', () => {
      // The host's one definition of the range (host/empo2/envs/base.py), which every adapter
      // clips to; the extension's copy must be the same numbers.
      const base = readFileSync(path.resolve(__dirname, '../../../../host/empo2/envs/base.py'), 'utf8');
      const [, min, max] = /^SCORE_MIN, SCORE_MAX = (-?[\d.]+), (-?[\d.]+)$/m.exec(base) ?? [];
      assert.deepEqual([SCORE_MIN, SCORE_MAX], [Number(min), Number(max)]);
      assert.equal(SCORE_SCALE, '−100 to 100');
      assert.equal(chart('return').unit, SCORE_SCALE);
    });

    it('no label of the extension or its webviews states the score as 0–100', () => {
      const files = (dir: string): string[] =>
        readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
          e.isDirectory() ? files(path.join(dir, e.name)) : e.name.endsWith('.ts') ? [path.join(dir, e.name)] : [],
        );
      const root = path.resolve(__dirname, '../../../..');
      const stating = [...files(path.join(root, 'src')), ...files(path.join(root, 'webview'))].filter((file) =>
        /\b0\s*[–-]\s*100\b/.test(readFileSync(file, 'utf8')),
      );
      assert.deepEqual(
        stating.map((file) => path.relative(root, file)),
        [],
      );
    });

    it('no chart calls anything "return" (the RL return is the score times algo.reward_scale)', () => {
      const names = CHARTS.flatMap((c) => [c.title, ...c.series.map((s) => s.label)]);
      assert.deepEqual(
        names.filter((name) => /return/i.test(name)),
        [],
      );
    });

    it('every chart of shares or scores names its scale', () => {
      for (const spec of CHARTS.filter((c) => c.series.every((s) => /success|fraction|share|return/.test(s.key)))) {
        assert.ok(spec.unit, `${spec.id} has a unit`);
      }
    });
  });
});
