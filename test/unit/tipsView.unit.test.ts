import * as assert from 'node:assert/strict';
import { configuredVariations } from '../../src/tips/variations';
import {
  NO_FILTER,
  applyChanges,
  countByVariation,
  filterTips,
  groupByVariation,
  groupCount,
  scoreLabel,
  scoreTitle,
} from '../../webview/tips/tipsView';
import { authorLine, tipPickDescription, versionLine } from '../../src/tips/tipWords';
import { aTip, aTipVersion } from '../builders/protocol';

describe('Memory Tips panel logic', () => {
  const tips = [
    aTip({ id: 't000001', variationKey: 'power-device/1', text: 'Open the shed', author: 'policy', score: 0 }),
    aTip({
      id: 't000002',
      variationKey: 'power-device/1',
      text: 'the lamp is in the office',
      author: 'alice',
      score: 100,
    }),
    aTip({ id: 't000003', variationKey: 'grow-plant/0', text: 'water after planting', author: 'policy', score: 1 }),
  ];

  it('searches text, id and variation, case-insensitively', () => {
    assert.deepEqual(
      filterTips(tips, { ...NO_FILTER, search: 'SHED' }).map((t) => t.id),
      ['t000001'],
    );
    assert.deepEqual(
      filterTips(tips, { ...NO_FILTER, search: 't000003' }).map((t) => t.id),
      ['t000003'],
    );
    assert.deepEqual(
      filterTips(tips, { ...NO_FILTER, search: 'grow' }).map((t) => t.id),
      ['t000003'],
    );
  });

  it('filters by variation and by author (policy, or people)', () => {
    assert.deepEqual(
      filterTips(tips, { ...NO_FILTER, variation: 'power-device/1' }).map((t) => t.id),
      ['t000001', 't000002'],
    );
    assert.deepEqual(
      filterTips(tips, { ...NO_FILTER, author: 'person' }).map((t) => t.id),
      ['t000002'],
    );
    assert.deepEqual(
      filterTips(tips, { ...NO_FILTER, author: 'policy' }).map((t) => t.id),
      ['t000001', 't000003'],
    );
  });

  it('groups by variation, highest score first as retrieval ranks them', () => {
    const groups = groupByVariation(tips);
    assert.deepEqual(
      groups.map((g) => g.variationKey),
      ['grow-plant/0', 'power-device/1'],
    );
    assert.deepEqual(
      groups[1].tips.map((t) => t.id),
      ['t000002', 't000001'],
    );
  });

  it('heads a group with the tips its variation holds, and how many are rendered when the list is cut', () => {
    const many = Array.from({ length: 17 }, (_, i) =>
      aTip({ id: `t${String(i).padStart(6, '0')}`, variationKey: 'grow-plant/0' }),
    );
    const rendered = groupByVariation([...tips, ...many].slice(0, 4));
    const held = countByVariation([...tips, ...many]);
    const grow = rendered.find((g) => g.variationKey === 'grow-plant/0')!;
    assert.equal(groupCount(held.get('grow-plant/0')!, grow.tips.length), '18 tips · 2 shown');
    assert.equal(groupCount(held.get('power-device/1')!, 2), '2 tips');
    assert.equal(groupCount(1, 1), '1 tip');
  });

  it('applies changes: newer versions win, evictions remove, deletions stay marked deleted', () => {
    const next = applyChanges(tips, [
      { change: 'updated', tip: { ...tips[0], version: 2, text: 'edited' }, by: { kind: 'person', name: 'bob' } },
      { change: 'updated', tip: { ...tips[1], version: 0, text: 'stale' }, by: { kind: 'person', name: 'bob' } },
      { change: 'evicted', tip: tips[2], by: { kind: 'system', name: 'system' } },
      { change: 'added', tip: aTip({ id: 't000004' }), by: { kind: 'policy', name: 'policy' } },
      { change: 'deleted', tip: { ...tips[1], version: 2 }, by: { kind: 'person', name: 'bob' } },
    ]);
    assert.deepEqual(
      next.map((t) => [t.id, t.text, Boolean(t.deleted)]),
      [
        ['t000001', 'edited', false],
        ['t000002', 'the lamp is in the office', true],
        ['t000004', 'look in the shed before the kitchen', false],
      ],
    );
  });

  it('hides deleted tips unless "Show deleted" is on, and then shows them with the live ones', () => {
    const withDeleted = [
      ...tips,
      aTip({ id: 't000005', variationKey: 'power-device/1', text: 'Open the shed first', deleted: true, version: 2 }),
    ];
    assert.deepEqual(
      filterTips(withDeleted, NO_FILTER).map((t) => t.id),
      ['t000001', 't000002', 't000003'],
    );
    assert.deepEqual(
      filterTips(withDeleted, { ...NO_FILTER, showDeleted: true, search: 'shed' }).map((t) => t.id),
      ['t000001', 't000005'],
    );
    // A view state saved before the filter existed has no showDeleted: deleted tips stay hidden.
    assert.deepEqual(filterTips(withDeleted, { search: '', variation: '', author: '' }).length, 3);
  });

  it('offers the variations a run trains on (built-in: 0–4) for a new tip', () => {
    assert.deepEqual(
      configuredVariations({ env: { name: 'builtin', tasks: ['power-device'] } }),
      [0, 1, 2, 3, 4].map((v) => `power-device/${v}`),
    );
    assert.deepEqual(
      configuredVariations({ env: { name: 'scienceworld', tasks: ['power-component'], train_variations: [7] } }),
      ['power-component/7'],
    );
    assert.deepEqual(configuredVariations(undefined), []);
  });
});

describe('tip card provenance', () => {
  it("names the current version's author with the original, never the client program", () => {
    assert.equal(authorLine(aTip()), 'by the policy');
    assert.equal(authorLine(aTip({ version: 2, versionAuthor: 'Ada' })), 'edited by Ada (v1 by the policy)');
    assert.equal(
      authorLine(aTip({ version: 3, deleted: true, versionAuthor: 'you' })),
      'deleted by you (v1 by the policy)',
    );
  });

  it("says in the palette's tip pick who edited the version it shows, not who wrote the first", () => {
    const edited = aTip({ variationKey: 'grow-plant/0', version: 2, author: 'policy', versionAuthor: 'you' });
    assert.equal(tipPickDescription(edited), 'grow-plant/0 · v2 · edited by you (v1 by the policy)');
    assert.doesNotMatch(tipPickDescription(edited), /v2 · by policy/);
  });

  it('reads its history as a person writes it: what each version did, and who', () => {
    assert.equal(versionLine(aTipVersion()), 'v1 · written by the policy');
    assert.equal(versionLine(aTipVersion({ version: 2, kind: 'update', author: 'you' })), 'v2 · edited by you');
    assert.equal(versionLine(aTipVersion({ version: 3, kind: 'delete', author: 'Ada' })), 'v3 · deleted by Ada');
    assert.equal(versionLine(aTipVersion({ version: 1, kind: 'add', author: 'Ada' })), 'v1 · written by Ada');
    assert.equal(
      versionLine(aTipVersion({ version: 4, kind: 'evict', author: 'system' })),
      'v4 · left its buffer (it was full)',
    );
  });

  it('says which score it shows, and that a hand-added tip has none', () => {
    assert.equal(scoreLabel(aTip({ score: 25 })), 'episode score 25');
    assert.equal(scoreLabel(aTip({ author: 'Ada', versionAuthor: 'Ada', score: null })), 'unscored');
    // Its tooltip states the scale the score is on: a failed ScienceWorld episode's tip scores −100.
    assert.match(scoreTitle(aTip({ score: -100 })), /final score \(−100 to 100\)/);
    assert.match(scoreTitle(aTip({ score: null })), /ranks it at 100, the top of the score scale \(−100 to 100\)/);
  });
});
