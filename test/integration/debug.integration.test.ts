import * as assert from 'node:assert/strict';
import { cpSync, existsSync } from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { DebugProtocol } from '@vscode/debugprotocol';
import { api, EXTENSION_ID } from '../builders/extension';
import { eventually } from '../builders/wait';

// The `empo2` debug type inside a real VS Code (code-server), against the real host the
// extension spawns: vscode.debug.startDebugging, a conditional breakpoint in the episode
// document's gutter is hit, the Variables are there, F10 (workbench.action.debug.stepOver) plays
// the next turn. The policy is the tiny built-in one the harness passes (EMPO2_TEST_POLICY),
// copied into the host's run root because a debug launch may only read folders inside it.

describe("debugging an episode in VS Code's debugger", function () {
  this.timeout(600_000);
  const stops: DebugProtocol.StoppedEvent[] = [];
  let tracker: vscode.Disposable;

  before(async () => {
    await vscode.extensions.getExtension(EXTENSION_ID)!.activate();
    tracker = vscode.debug.registerDebugAdapterTrackerFactory('empo2', {
      createDebugAdapterTracker: () => ({
        onDidSendMessage: (message: DebugProtocol.ProtocolMessage) => {
          const event = message as DebugProtocol.Event;
          if (event.type === 'event' && event.event === 'stopped') {
            stops.push(event as DebugProtocol.StoppedEvent);
          }
        },
      }),
    });
    if (!api().host.current) {
      await vscode.commands.executeCommand('empo2.startHost');
    }
  });

  after(async () => {
    tracker?.dispose();
    await vscode.debug.stopDebugging();
  });

  async function nextStop(count: number): Promise<DebugProtocol.StoppedEvent> {
    const deadline = Date.now() + 300_000;
    while (stops.length < count) {
      if (Date.now() > deadline) {
        throw new Error(`no stopped event #${count}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    return stops[count - 1];
  }

  it("hits a gutter breakpoint, shows the turn's variables, and F10 plays the next turn", async () => {
    const session = api().host.current;
    assert.ok(session, 'the host is connected');
    const root = session.init.capabilities.runRoots[0];
    const policy = path.join(root, 'debug-tiny-policy');
    if (!existsSync(policy)) {
      cpSync(process.env.EMPO2_TEST_POLICY!, policy, { recursive: true });
    }
    const uri = vscode.Uri.from({ scheme: 'empo2-episode', path: '/policy/power-device-0-seed1.empo2-episode' });
    vscode.debug.addBreakpoints([
      new vscode.SourceBreakpoint(
        new vscode.Location(uri, new vscode.Position(1, 0)),
        true,
        'turn == 1 and len(tokens) > 0',
      ),
    ]);
    const started = await vscode.debug.startDebugging(undefined, {
      type: 'empo2',
      request: 'launch',
      name: 'integration',
      policyPath: policy,
      task: 'power-device',
      variation: 0,
      seed: 1,
      device: 'cpu',
      stopOnEntry: false,
    });
    assert.ok(started, 'the debug session started');
    const hit = await nextStop(1);
    assert.equal(hit.body.reason, 'breakpoint');
    const debugSession = vscode.debug.activeDebugSession!;
    assert.equal(debugSession.type, 'empo2');
    const stack = (await debugSession.customRequest('stackTrace', {
      threadId: 1,
    })) as DebugProtocol.StackTraceResponse['body'];
    assert.equal(stack.stackFrames[0].line, 2);
    assert.match(stack.stackFrames[0].name, /^turn 1: /);
    const scopes = (await debugSession.customRequest('scopes', {
      frameId: stack.stackFrames[0].id,
    })) as DebugProtocol.ScopesResponse['body'];
    const turn = scopes.scopes.find((s) => s.name === 'Turn')!;
    const vars = (await debugSession.customRequest('variables', {
      variablesReference: turn.variablesReference,
    })) as DebugProtocol.VariablesResponse['body'];
    const names = new Set(vars.variables.map((v) => v.name));
    for (const name of ['observation', 'prompt', 'action', 'tokens', 'min_logprob', 'reward', 'intrinsic']) {
      assert.ok(names.has(name), `${name} in Variables`);
    }
    // The token view of the turn it stopped on; it follows the debugger to the next turn.
    const tokenViews = () =>
      vscode.window.visibleTextEditors
        .filter((e) => e.document.uri.scheme === 'empo2-tokens')
        .map((e) => e.document.uri.path);
    assert.equal(await vscode.commands.executeCommand('empo2.showTokens'), true);
    await eventually('the token view of turn 1', () => tokenViews().includes('/turn-1.tokens'));
    await vscode.commands.executeCommand('workbench.action.debug.stepOver');
    const step = await nextStop(2);
    assert.ok(['step', 'end', 'exception'].includes(step.body.reason), step.body.reason);
    const after = (await debugSession.customRequest('stackTrace', {
      threadId: 1,
    })) as DebugProtocol.StackTraceResponse['body'];
    assert.equal(after.stackFrames[0].line, 3);
    const document =
      vscode.workspace.textDocuments.find((d) => d.uri.toString() === uri.toString()) ??
      (await vscode.workspace.openTextDocument(uri));
    // The adapter writes the line before it sends the stop, but VS Code re-reads a content
    // provider's document asynchronously after onDidChange, so the new text may arrive a moment
    // after the stopped event: wait for it rather than read it once.
    await eventually('line 3 of the episode document to show turn 2 played', () =>
      /^turn 2: .+ → /.test(document.lineAt(2).text),
    );
    assert.equal(document.languageId, 'empo2-episode');
    await eventually('the token view to follow the debugger to turn 2', () => tokenViews().includes('/turn-2.tokens'));
    assert.deepEqual(tokenViews(), ['/turn-2.tokens'], 'one token view, of the turn the debugger is on');

    // Once the session has ended, its turns are not "the current turn" any more.
    let listener: vscode.Disposable | undefined;
    const ended = new Promise<void>((resolve) => (listener = vscode.debug.onDidTerminateDebugSession(() => resolve())));
    await vscode.debug.stopDebugging(debugSession);
    await ended;
    listener?.dispose();
    assert.equal(await vscode.commands.executeCommand('empo2.showTokens'), false);
  });
});
