import * as assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { autoStartRequest, autoStartStep, readAutoStarted, type AutoStarted } from '../../src/runs/autoStartPlan';
import { autoStartedRecordFile, readAutoStartedRecord, writeAutoStartedRecord } from '../../src/runs/autoStartRecord';
import { aRunInfo } from '../builders/protocol';

// empo2.autoStartRun in a window opened again: the run it started goes on; a new one starts only
// when that run is done with or was never started here.

const STARTED: AutoStarted = { request: 'builtin', runId: 'builtin-1' };

describe('autoStartStep', () => {
  it('starts a run in a workspace where it never started one', () => {
    assert.deepEqual(autoStartStep('builtin', undefined, []), { kind: 'start' });
    assert.deepEqual(
      autoStartStep('builtin', undefined, [aRunInfo({ runId: 'builtin-1', state: 'interrupted' })]),
      { kind: 'start' },
      'not its own run: left alone',
    );
  });

  it('resumes the run it started when a reload shut its host down', () => {
    const runs = [
      aRunInfo({ runId: 'other', state: 'interrupted' }),
      aRunInfo({ runId: 'builtin-1', state: 'interrupted' }),
    ];
    assert.deepEqual(autoStartStep('builtin', STARTED, runs), { kind: 'resume', runId: 'builtin-1' });
  });

  it('shows the run it started while another process still trains it, and starts nothing', () => {
    for (const state of ['starting', 'running', 'pausing', 'paused', 'stopping'] as const) {
      assert.deepEqual(
        autoStartStep('builtin', STARTED, [aRunInfo({ runId: 'builtin-1', state })]),
        { kind: 'show', runId: 'builtin-1' },
        state,
      );
    }
  });

  it('shows a run this host trains already, whatever started it', () => {
    const runs = [
      aRunInfo({ runId: 'builtin-1', state: 'interrupted' }),
      aRunInfo({ runId: 'mine', state: 'running', live: true }),
    ];
    assert.deepEqual(autoStartStep('builtin', STARTED, runs), { kind: 'show', runId: 'mine' });
  });

  it('starts a new run when its run is done with, gone, or was started for another request', () => {
    for (const state of ['finished', 'stopped', 'failed', 'created'] as const) {
      assert.deepEqual(
        autoStartStep('builtin', STARTED, [aRunInfo({ runId: 'builtin-1', state })]),
        { kind: 'start' },
        state,
      );
    }
    assert.deepEqual(autoStartStep('builtin', STARTED, []), { kind: 'start' }, 'its folder is gone');
    assert.deepEqual(
      autoStartStep('tiny.json', STARTED, [aRunInfo({ runId: 'builtin-1', state: 'interrupted' })]),
      { kind: 'start' },
      'another request',
    );
  });

  it('tells launches apart: the script run again starts a new run', () => {
    const first = autoStartRequest('builtin', '1765000000-41');
    const started: AutoStarted = { request: first, runId: 'builtin-1' };
    const runs = [aRunInfo({ runId: 'builtin-1', state: 'interrupted' })];
    assert.deepEqual(
      autoStartStep(autoStartRequest('builtin', '1765000000-41'), started, runs),
      { kind: 'resume', runId: 'builtin-1' },
      'a reload',
    );
    assert.deepEqual(
      autoStartStep(autoStartRequest('builtin', '1765000300-97'), started, runs),
      { kind: 'start' },
      'another launch',
    );
    assert.equal(autoStartRequest('builtin', ''), 'builtin', 'set by hand, without a launch: one request');
  });

  it('reads back only what it wrote', () => {
    assert.deepEqual(readAutoStarted({ request: 'builtin', runId: 'builtin-1' }), STARTED);
    for (const value of [undefined, null, 'builtin-1', { request: 'builtin' }, { request: 1, runId: 'x' }]) {
      assert.equal(readAutoStarted(value), undefined, JSON.stringify(value));
    }
  });
});

describe("the auto-started run's record", () => {
  // A file on the extension host's machine, one per workspace folder: any browser, and any
  // window open on the folder, reads the same one.
  let storage: string;
  beforeEach(() => {
    storage = path.join(mkdtempSync(path.join(os.tmpdir(), 'empo2-auto-')), 'globalStorage');
  });
  afterEach(() => rmSync(path.dirname(storage), { recursive: true, force: true }));

  it('is read back by the next window on the folder, and replaced by a later start', () => {
    const file = autoStartedRecordFile(storage, '/home/ada/project');
    assert.equal(readAutoStartedRecord(file), undefined, 'no storage folder yet');
    writeAutoStartedRecord(file, STARTED);
    assert.deepEqual(readAutoStartedRecord(autoStartedRecordFile(storage, '/home/ada/project')), STARTED);
    assert.equal(readAutoStartedRecord(autoStartedRecordFile(storage, '/home/ada/other')), undefined, 'another folder');
    writeAutoStartedRecord(file, { request: 'builtin (launch 2)', runId: 'builtin-2' });
    assert.deepEqual(readAutoStartedRecord(file), { request: 'builtin (launch 2)', runId: 'builtin-2' });
    assert.deepEqual(readdirSync(path.dirname(file)), [path.basename(file)], 'no partial file left behind');
  });

  it('counts a damaged record as none', () => {
    const file = autoStartedRecordFile(storage, '');
    writeAutoStartedRecord(file, STARTED);
    for (const text of ['{"request": "builtin", "runId"', '[]', '{"runId": "builtin-1"}']) {
      writeFileSync(file, text);
      assert.equal(readAutoStartedRecord(file), undefined, text);
    }
  });
});
