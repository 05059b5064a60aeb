import * as assert from 'node:assert/strict';
import type { DebugProtocol } from '@vscode/debugprotocol';
import { Empo2DebugAdapter } from '../../src/debug/adapter';

// An expression's error goes to the Debug Console (or the watch) that asked, and nowhere else:
// a DAP error with `showUser` is also raised by VS Code as an error notification.

async function evaluate(expression: string): Promise<DebugProtocol.Response> {
  const host = { request: () => Promise.reject(new Error('no host in this test')) };
  const adapter = new Empo2DebugAdapter(host);
  const answered = new Promise<DebugProtocol.Response>((resolve) => {
    adapter.onDidSendMessage((message) => {
      if ((message as DebugProtocol.ProtocolMessage).type === 'response') {
        resolve(message as DebugProtocol.Response);
      }
    });
  });
  adapter.handleMessage({
    seq: 1,
    type: 'request',
    command: 'evaluate',
    arguments: { expression, context: 'repl' },
  } as DebugProtocol.EvaluateRequest);
  const response = await answered;
  adapter.dispose();
  return response;
}

describe("the debug console's errors", () => {
  it('answers a malformed expression with its error, not shown to the user as a notification', async () => {
    const response = await evaluate('turn ==');
    assert.equal(response.success, false);
    assert.ok(response.message && response.message.length > 0, 'the error says what is wrong');
    assert.notEqual((response.body as { error?: DebugProtocol.Message }).error?.showUser, true);
  });

  it('answers a forced action that cannot be played the same way', async () => {
    const response = await evaluate('> look around');
    assert.equal(response.success, false);
    assert.match(response.message ?? '', /debug session has ended/);
    assert.notEqual((response.body as { error?: DebugProtocol.Message }).error?.showUser, true);
  });
});
