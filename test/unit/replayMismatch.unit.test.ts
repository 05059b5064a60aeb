import * as assert from 'node:assert/strict';
import * as net from 'node:net';
import { DebugClient } from '@vscode/debugadapter-testsupport';
import type { DebugProtocol } from '@vscode/debugprotocol';
import { Empo2DebugAdapter } from '../../src/debug/adapter';
import type { EpisodeView, LeftRecording } from '../../src/debug/replayMismatch';
import { DebugRequests } from '../../src/debug/debugRequests';
import type { DebugObservationMismatch, DebugReplaySummary } from '../../src/rpc/debugProtocol';
import { aDebugSession, aDebugTurnResult } from '../builders/debug';
import { FakeHost } from '../builders/fakeHost';

// A replay whose environment shows another observation than the recorded one (its reset or a
// step is not deterministic in the seed): the debugger says at which turn, with both texts, in
// the Debug Console, as the reason it stops, and to the extension (which offers a diff of the two
// documents written here), once. The host's answers are schema-checked (FakeHost).

class RecordingView implements EpisodeView {
  readonly texts = new Map<string, string>();
  update(p: string, text: string): void {
    this.texts.set(p, text);
  }
  forget(): void {}
}

const replay: DebugReplaySummary = {
  runId: 'lockbox',
  episodeId: 'i000001-e0002',
  turns: 3,
  firstDifferentTurn: null,
  maxLogprobError: 1e-6,
  playedBy: 0,
  note: null,
  observationMismatch: null,
};
const atTurn1: DebugObservationMismatch = {
  turn: 1,
  recorded: 'you search the oven . you find a key .',
  replayed: 'you search the oven . you find dust .',
  message:
    "The replay left the recording at turn 1: the environment answered the recorded action 'search oven' with another observation than the recorded one, so the environment is not deterministic in its seed; the policy plays on from the environment's own state.",
};
const atReset: DebugObservationMismatch = {
  turn: 0,
  recorded: 'you are in the hall .',
  replayed: 'you are in the cellar .',
  message:
    "The replay left the recording at turn 0: the environment's reset with seed 1 showed another first observation than the recorded one, so the environment is not deterministic in its seed; the policy plays on from the environment's own state.",
};

describe('a replay that leaves its recording', function () {
  this.timeout(30_000);
  let host: FakeHost;
  let view: RecordingView;
  let left: LeftRecording[];
  let server: net.Server;
  let dc: DebugClient;
  let outputs: string[];

  async function start(
    startMismatch: DebugObservationMismatch | null,
    steps: Array<DebugObservationMismatch | null>,
  ): Promise<void> {
    host = new FakeHost();
    view = new RecordingView();
    left = [];
    host.handle(DebugRequests.start, () => ({
      session: aDebugSession({ task: 'escape', replay: { ...replay, observationMismatch: startMismatch } }),
    }));
    let index = 0;
    host.handle(DebugRequests.step, () => {
      const mismatch = steps[index] ?? null;
      const result = aDebugTurnResult({ index, nextObservation: mismatch?.replayed ?? 'you are in the study .' });
      index += 1;
      return {
        ...result,
        episode: {
          ...result.episode,
          turns: index,
          observationMismatch: mismatch,
          replaying: !mismatch && !startMismatch,
        },
      };
    });
    host.handle(DebugRequests.stop, () => ({ stopped: true }));
    server = net.createServer((socket) => {
      const adapter = new Empo2DebugAdapter(host, view);
      adapter.onDidLeaveRecording((l) => left.push(l));
      adapter.setRunAsServer(true);
      adapter.start(socket, socket);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    dc = new DebugClient('node', 'unused', 'empo2');
    await dc.start((server.address() as net.AddressInfo).port);
    outputs = [];
    dc.on('output', (e: DebugProtocol.OutputEvent) => outputs.push(e.body.output));
    await Promise.all([
      dc.configurationSequence(),
      dc.launch({
        type: 'empo2',
        request: 'launch',
        name: 't',
        replay: { runId: 'lockbox', episodeId: 'i000001-e0002' },
        stopOnEntry: true,
      } as DebugProtocol.LaunchRequestArguments),
      dc.waitForEvent('stopped'),
    ]);
  }

  /** The Episode scope's variables (the debugger's first frame is the turn's, its last the
   *  episode's), and the children of `left_recording` when it has any. */
  async function episodeVariables(): Promise<{ vars: Map<string, string>; left: Map<string, string> }> {
    const stack = await dc.stackTraceRequest({ threadId: 1 });
    const frameId = stack.body.stackFrames[stack.body.stackFrames.length - 1].id;
    const scopes = await dc.scopesRequest({ frameId });
    const scope = scopes.body.scopes.find((s) => s.name === 'Episode');
    assert.ok(scope, `no Episode scope in ${scopes.body.scopes.map((s) => s.name)}`);
    const { body } = await dc.variablesRequest({ variablesReference: scope.variablesReference });
    const vars = new Map(body.variables.map((v) => [v.name, v.value]));
    const leftVar = body.variables.find((v) => v.name === 'left_recording');
    assert.ok(leftVar, `no left_recording in ${[...vars.keys()]}`);
    const children = leftVar.variablesReference
      ? (await dc.variablesRequest({ variablesReference: leftVar.variablesReference })).body.variables
      : [];
    return { vars, left: new Map(children.map((v) => [v.name, v.value])) };
  }

  afterEach(async () => {
    await dc.stop();
    server.close();
    assert.deepEqual(host.violations, []);
  });

  it('stops on the turn that left it, names the turn, shows both texts, and says it once', async () => {
    await start(null, [null, atTurn1, atTurn1]);
    const [, first] = await Promise.all([dc.nextRequest({ threadId: 1 }), dc.waitForEvent('stopped')]);
    assert.equal(first.body.reason, 'step');
    assert.equal(left.length, 0);
    const before = await episodeVariables();
    assert.equal(before.vars.get('replaying'), 'true');
    assert.equal(before.vars.get('left_recording'), 'null');
    const [, second] = await Promise.all([dc.nextRequest({ threadId: 1 }), dc.waitForEvent('stopped')]);
    assert.equal(second.body.reason, 'exception');
    assert.equal(second.body.text, atTurn1.message);
    assert.ok(
      outputs.some(
        (o) =>
          o.startsWith('The replay left the recording at turn 1:') &&
          o.includes(`recorded: ${atTurn1.recorded}`) &&
          o.includes(`replayed: ${atTurn1.replayed}`),
      ),
      outputs.join(''),
    );
    assert.equal(left.length, 1);
    assert.equal(left[0].mismatch.turn, 1);
    assert.equal(view.texts.get(left[0].recordedPath), atTurn1.recorded);
    assert.equal(view.texts.get(left[0].replayedPath), atTurn1.replayed);
    assert.notEqual(left[0].recordedPath, left[0].replayedPath);
    // The Variables view says it too: the episode no longer replays, and where it left.
    const after = await episodeVariables();
    assert.equal(after.vars.get('replaying'), 'false');
    assert.equal(after.left.get('turn'), '1');
    assert.equal(after.left.get('recorded'), JSON.stringify(atTurn1.recorded));
    assert.equal(after.left.get('replayed'), JSON.stringify(atTurn1.replayed));
    // The next turn is the policy's own: the same mismatch is not said again.
    const [, third] = await Promise.all([dc.nextRequest({ threadId: 1 }), dc.waitForEvent('stopped')]);
    assert.equal(third.body.reason, 'step');
    assert.equal(left.length, 1);
    assert.equal(outputs.filter((o) => o.startsWith('The replay left the recording')).length, 1);
  });

  it("says a reset's other first observation when the session starts, at turn 0", async () => {
    await start(atReset, []);
    assert.equal(left.length, 1);
    assert.equal(left[0].mismatch.turn, 0);
    assert.equal(view.texts.get(left[0].recordedPath), 'you are in the hall .');
    assert.equal(view.texts.get(left[0].replayedPath), 'you are in the cellar .');
    assert.ok(
      outputs.some(
        (o) =>
          o.startsWith('The replay left the recording at turn 0:') && o.includes('replayed: you are in the cellar .'),
      ),
      outputs.join(''),
    );
    const { vars, left: shown } = await episodeVariables();
    assert.equal(vars.get('replaying'), 'false');
    assert.equal(shown.get('turn'), '0');
    assert.equal(shown.get('replayed'), JSON.stringify('you are in the cellar .'));
  });
});
