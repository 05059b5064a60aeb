import * as assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { DebugClient } from '@vscode/debugadapter-testsupport';
import { Empo2DebugAdapter } from '../../src/debug/adapter';
import type { EpisodeView } from '../../src/debug/replayMismatch';
import { HostProcess } from '../../src/host/hostProcess';
import { RpcClient } from '../../src/rpc/client';
import { Requests } from '../../src/rpc/methods';
import { PROTOCOL_VERSION } from '../../src/rpc/protocol';
import { connectWebSocket } from '../../src/rpc/wsTransport';
import { tinyPolicyFolder } from '../builders/tinyPolicy';

// The `empo2` debug adapter against @vscode/debugadapter-testsupport's DebugClient (the DAP as
// VS Code speaks it), talking to a real `empo2-host serve` (the project's venv, the tiny
// built-in policy the other tiers train, the real built-in world). Nothing is faked.

const repoRoot = path.resolve(__dirname, '../../../..');
const python = path.join(repoRoot, '.venv', 'bin', 'python');

class RecordingView implements EpisodeView {
  readonly texts = new Map<string, string>();
  update(p: string, text: string): void {
    this.texts.set(p, text);
  }
  forget(p: string): void {
    this.texts.delete(p);
  }
}

describe('the empo2 debug adapter, over DAP, on a real host', function () {
  this.timeout(600_000);
  let host: HostProcess;
  let rpc: RpcClient;
  let server: net.Server;
  let dc: DebugClient;
  let policy: string;
  let root: string;
  let view: RecordingView;

  before(async () => {
    policy = await tinyPolicyFolder();
    root = mkdtempSync(path.join(os.tmpdir(), 'empo2-debug-'));
    host = new HostProcess({
      python,
      args: ['--run-root', root, '--run-root', path.dirname(policy)],
      cwd: repoRoot,
      env: {
        ...process.env,
        PYTHONPATH: path.join(repoRoot, 'host'),
        HF_HUB_OFFLINE: '1',
        TRANSFORMERS_OFFLINE: '1',
        EMPO2_NO_PROGRESS: '1',
      },
      readyTimeoutMs: 600_000,
    });
    const ready = await host.ready;
    rpc = new RpcClient(await connectWebSocket(`ws://127.0.0.1:${ready.port}/`, host.token), {
      defaultTimeoutMs: 300_000,
    });
    await rpc.request(Requests.initialize, {
      protocolVersion: PROTOCOL_VERSION,
      clientInfo: { name: 'debug-adapter-test', version: '1' },
      capabilities: { logMessages: false },
    });
    view = new RecordingView();
    server = net.createServer((socket) => {
      const adapter = new Empo2DebugAdapter(rpc, view);
      adapter.setRunAsServer(true);
      adapter.start(socket, socket);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  });

  after(async () => {
    rpc?.dispose();
    server?.close();
    await host?.stop();
    rmSync(root, { recursive: true, force: true });
  });

  beforeEach(async () => {
    dc = new DebugClient('node', 'unused', 'empo2');
    dc.defaultTimeout = 300_000;
    await dc.start((server.address() as net.AddressInfo).port);
  });

  afterEach(async () => {
    await dc.stop();
  });

  const launch = {
    type: 'empo2',
    request: 'launch',
    name: 't',
    policyPath: '',
    task: 'power-device',
    variation: 0,
    seed: 1,
    device: 'cpu',
    stopOnEntry: true,
  };
  const source = () => ({ path: 'empo2-episode:/policy/power-device-0-seed1.empo2-episode' });

  async function variables(frameId: number, scopeName: string): Promise<Map<string, string>> {
    const scopes = await dc.scopesRequest({ frameId });
    const scope = scopes.body.scopes.find((s) => s.name === scopeName);
    assert.ok(scope, `no ${scopeName} scope in ${scopes.body.scopes.map((s) => s.name)}`);
    const vars = await dc.variablesRequest({ variablesReference: scope.variablesReference });
    return new Map(vars.body.variables.map((v) => [v.name, v.value]));
  }

  it('stops on entry, runs to a conditional breakpoint on turn 2, shows its variables, F10 advances', async () => {
    await Promise.all([
      dc.initializeRequest(),
      dc.waitForEvent('initialized').then(async () => {
        const set = await dc.setBreakpointsRequest({
          source: source(),
          breakpoints: [
            { line: 3, condition: 'reward >= 0 and turn == 2' },
            { line: 2, logMessage: 'turn {turn}: {action} min {min_logprob}' },
          ],
        });
        assert.deepEqual(
          set.body.breakpoints.map((b) => b.verified),
          [true, true],
        );
        await dc.setExceptionBreakpointsRequest({ filters: [] });
        return dc.configurationDoneRequest();
      }),
      dc.launch({ ...launch, policyPath: policy }),
      dc.waitForEvent('stopped').then((e) => assert.equal(e.body.reason, 'entry')),
    ]);
    const logged = dc.waitForEvent('output', 300_000);
    await Promise.all([dc.continueRequest({ threadId: 1 }), dc.assertStoppedLocation('breakpoint', { line: 3 })]);
    const stack = await dc.stackTraceRequest({ threadId: 1 });
    assert.match(stack.body.stackFrames[0].name, /^turn 2: /);
    assert.equal(stack.body.stackFrames.at(-1)?.name.startsWith('episode power-device'), true);
    const turn = await variables(stack.body.stackFrames[0].id, 'Turn');
    for (const name of [
      'observation',
      'prompt',
      'prompt_no_tips',
      'tips',
      'action',
      'executed_action',
      'tokens',
      'min_logprob',
      'reward',
      'score',
      'intrinsic',
      'tips_retrieved',
      'score_changed',
    ]) {
      assert.ok(turn.has(name), `${name} missing from ${[...turn.keys()]}`);
    }
    assert.equal(turn.get('turn'), '2');
    // VS Code's own Variables view asks for the scopes when a stop arrives, interleaved with any
    // other client's requests: a second scopes request must not void the handles of the first.
    const first = await dc.scopesRequest({ frameId: stack.body.stackFrames[0].id });
    await dc.scopesRequest({ frameId: stack.body.stackFrames[0].id });
    const early = first.body.scopes.find((s) => s.name === 'Turn')!;
    const still = await dc.variablesRequest({ variablesReference: early.variablesReference });
    assert.ok(
      still.body.variables.some((v) => v.name === 'observation'),
      'a handle from an earlier scopes request of the same stop still resolves',
    );
    assert.ok((await logged).body.output.length > 0);
    const evaluated = await dc.evaluateRequest({
      expression: 'tips_retrieved == 0 and len(tokens) > 0',
      context: 'watch',
      frameId: stack.body.stackFrames[0].id,
    });
    assert.equal(evaluated.body.result, 'true');
    const bad = await dc.evaluateRequest({ expression: 'process.exit', context: 'watch' }).catch((e: Error) => e);
    assert.ok(bad instanceof Error && /not defined/.test(bad.message), String(bad));
    await Promise.all([dc.nextRequest({ threadId: 1 }), dc.assertStoppedLocation('step', { line: 4 })]);
    const text = view.texts.get('/policy/power-device-0-seed1.empo2-episode') ?? '';
    assert.match(text.split('\n')[3], /^turn 3: .+ → /);
  });

  it('advertises its exception filters and stops on them: an invalid action corrected, the failed episode', async () => {
    const first = dc.waitForEvent('stopped');
    await Promise.all([
      dc.initializeRequest().then((init) => {
        assert.deepEqual(
          init.body?.exceptionBreakpointFilters?.map((f) => f.filter),
          ['corrected', 'failed', 'differs'],
        );
      }),
      dc.waitForEvent('initialized').then(async () => {
        await dc.setExceptionBreakpointsRequest({ filters: ['corrected'] });
        return dc.configurationDoneRequest();
      }),
      dc.launch({ ...launch, policyPath: policy, seed: 3, stopOnEntry: false }),
    ]);
    // The tiny policy writes mostly invalid actions: F5 plays until the first one corrected.
    const corrected = await first;
    assert.equal(corrected.body.reason, 'exception');
    assert.match(corrected.body.description, /^invalid action corrected: /);
    let top = (await dc.stackTraceRequest({ threadId: 1 })).body.stackFrames[0];
    const turn = await variables(top.id, 'Turn');
    assert.equal(turn.get('corrected'), 'true');
    assert.notEqual(turn.get('action'), turn.get('executed_action'));
    // Now only "Episode failed": forced valid actions (no generation, so quick) never succeed,
    // and the turn that ends the episode without success stops with it.
    await dc.setExceptionBreakpointsRequest({ filters: ['failed'] });
    const reasons: string[] = [];
    for (let guard = 0; guard < 100; guard++) {
      const stopped = dc.waitForEvent('stopped');
      await dc.evaluateRequest({ expression: '> look around', context: 'repl' });
      const stop = await stopped;
      reasons.push(stop.body.description ?? stop.body.reason);
      if (stop.body.reason === 'exception') {
        assert.match(stop.body.description, /^episode failed \(score \d+/);
        break;
      }
      assert.equal(stop.body.reason, 'step', 'no "corrected" stop once that filter is off');
    }
    assert.match(reasons.at(-1) ?? '', /^episode failed/, reasons.join(' | '));
    top = (await dc.stackTraceRequest({ threadId: 1 })).body.stackFrames[0];
    assert.equal((await variables(top.id, 'Episode')).get('success'), 'false');
  });

  it('steps into tokens (F11), finishes the turn (Shift+F11), forces an action from the console, restarts a frame', async () => {
    await Promise.all([
      dc.configurationSequence(),
      dc.launch({ ...launch, policyPath: policy, seed: 2 }),
      dc.waitForEvent('stopped'),
    ]);
    await Promise.all([dc.stepInRequest({ threadId: 1 }), dc.assertStoppedLocation('step', { line: 1 })]);
    const stack = await dc.stackTraceRequest({ threadId: 1 });
    assert.deepEqual(
      stack.body.stackFrames.map((f) => f.name.split(' ')[0]),
      ['token', 'turn', 'episode'],
    );
    const token = await variables(stack.body.stackFrames[0].id, 'Token');
    for (const name of ['text', 'logprob', 'logprob_no_tips', 'alternatives']) {
      assert.ok(token.has(name), `${name} missing`);
    }
    await Promise.all([dc.stepOutRequest({ threadId: 1 }), dc.assertStoppedLocation('step', { line: 1 })]);
    const afterTurn = await dc.stackTraceRequest({ threadId: 1 });
    assert.match(afterTurn.body.stackFrames[0].name, /^turn 0: /);
    const forced = await dc.evaluateRequest({ expression: '> look around', context: 'repl' });
    assert.match(forced.body.result, /^turn 1: look around → reward/);
    await dc.waitForEvent('stopped');
    const top = (await dc.stackTraceRequest({ threadId: 1 })).body.stackFrames[0];
    assert.equal((await variables(top.id, 'Turn')).get('forced'), 'true');
    await Promise.all([
      dc.customRequest('restartFrame', { frameId: top.id }),
      dc.waitForEvent('stopped').then((e) => assert.equal(e.body.reason, 'restart')),
    ]);
    const replayed = (await dc.stackTraceRequest({ threadId: 1 })).body.stackFrames[0];
    assert.equal((await variables(replayed.id, 'Turn')).get('forced'), 'false');
  });
});
