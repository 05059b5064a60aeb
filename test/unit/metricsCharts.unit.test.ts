import * as assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { appendRecords, CHART_KEYS, CHARTS, emptyColumns, parseMetricsJsonl } from '../../src/runs/metricsCharts';
import { aMetricsRecord } from '../builders/protocol';

const root = path.resolve(__dirname, '../../../..');

describe('metrics charts', () => {
  it('draws every quantity a person watches training by', () => {
    // In a chart's title or a series' label (the evaluation with memory is the memory-augmented one).
    const titles = CHARTS.flatMap((c) => [c.title, ...c.series.map((s) => s.label)])
      .join(' | ')
      .toLowerCase();
    for (const quantity of [
      'score by rollout mode',
      'memory-free',
      'eval with memory',
      'masked-token',
      'importance ratio',
      'clip fraction',
      'entropy',
      'kl',
      'tip',
      'intrinsic',
      'throughput',
    ]) {
      assert.ok(titles.includes(quantity), quantity);
    }
  });

  it('charts only keys the host declares (protocol/metric-keys.json, written from empo2.metric_keys)', () => {
    const declared = Object.keys(
      JSON.parse(readFileSync(path.join(root, 'protocol', 'metric-keys.json'), 'utf8')).metrics as Record<
        string,
        string
      >,
    );
    // A `{task}` key stands for one key per task of the run.
    const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    const patterns = declared.map((key) => new RegExp(`^${escape(key).replace(escape('{task}'), '[^/]+')}$`));
    const undeclared = CHART_KEYS.filter((key) => !patterns.some((pattern) => pattern.test(key)));
    assert.deepEqual(undeclared, []);
  });

  it('reads the rollout metrics under the names the real host writes', () => {
    // A metrics record the real host sent in a recorded session (a memory-mode iteration); the
    // memory-free twin of each rollout/memory/* key is spelled rollout/memory_free/*.
    const transcript = readFileSync(
      path.join(root, 'test', 'fixtures', 'transcripts', 'training-session.jsonl'),
      'utf8',
    );
    const line = transcript.split('\n').find((l) => l.includes('"method":"run/metrics"'))!;
    const recorded = Object.keys(JSON.parse(line).message.params.records[0]);
    for (const key of CHART_KEYS.filter((k) => k.startsWith('rollout/'))) {
      assert.ok(recorded.includes(key.replace('/memory_free/', '/memory/')), `${key} is a key the host writes`);
    }
  });

  it('turns records into columns, null where a metric is absent', () => {
    const columns = appendRecords(emptyColumns(['rollout/return', 'eval/memory/success']), [
      aMetricsRecord({ iteration: 1, 'rollout/return': 0.5 }),
      aMetricsRecord({ iteration: 2, 'rollout/return': 0.75, 'eval/memory/success': 1 }),
    ]);
    assert.deepEqual(columns, {
      iterations: [1, 2],
      series: { 'rollout/return': [0.5, 0.75], 'eval/memory/success': [null, 1] },
    });
  });

  it('replaces rows from a re-sent iteration on (a resumed run rolled back)', () => {
    const columns = appendRecords(
      emptyColumns(['rollout/return']),
      [1, 2, 3, 4].map((i) => aMetricsRecord({ iteration: i, 'rollout/return': i })),
    );
    appendRecords(columns, [aMetricsRecord({ iteration: 3, 'rollout/return': 30 })]);
    assert.deepEqual(columns.iterations, [1, 2, 3]);
    assert.deepEqual(columns.series['rollout/return'], [1, 2, 30]);
  });

  it('parses metrics.jsonl, skipping a torn last line', () => {
    const text = `${JSON.stringify(aMetricsRecord({ iteration: 1 }))}\n${JSON.stringify(aMetricsRecord({ iteration: 2 }))}\n{"iteration": 3, "rollo`;
    assert.deepEqual(
      parseMetricsJsonl(text).map((r) => r.iteration),
      [1, 2],
    );
  });

  // How fast: test/benchmarks/metricsAppend.bench.ts (npm run bench:metrics) prints it against a
  // baseline; a test with a time limit would only measure how busy the machine was.
  it('appends 100,000 iterations, every one in its column in order', () => {
    const records = Array.from({ length: 100_000 }, (_, i) =>
      aMetricsRecord({ iteration: i + 1, 'rollout/return': Math.sin(i) }),
    );
    const columns = appendRecords(emptyColumns(), records);
    assert.equal(columns.iterations.length, 100_000);
    assert.deepEqual([columns.iterations[0], columns.iterations[99_999]], [1, 100_000]);
    assert.equal(columns.series['rollout/return'][12_345], Math.sin(12_345));
    for (const key of CHART_KEYS) {
      assert.equal(columns.series[key].length, 100_000, key);
    }
  });
});
