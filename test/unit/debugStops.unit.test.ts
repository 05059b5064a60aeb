import * as assert from 'node:assert/strict';
import { StoppedEvent } from '@vscode/debugadapter';
import type { DebugProtocol } from '@vscode/debugprotocol';
import { Empo2DebugAdapter } from '../../src/debug/adapter';

// The token view follows the debugger: the adapter says when it stops, to listeners of its own,
// because its onDidSendMessage holds a single listener (the one VS Code sets for the protocol).

describe("the debug adapter's stops", () => {
  it("are told to onDidStop, and the protocol's one listener still gets every message", () => {
    const adapter = new Empo2DebugAdapter({ request: () => Promise.reject(new Error('no host in this test')) });
    const sent: string[] = [];
    let stops = 0;
    adapter.onDidStop(() => stops++);
    adapter.onDidSendMessage((message) => sent.push((message as DebugProtocol.Event).event));
    adapter.onDidStop(() => stops++);
    adapter.sendEvent(new StoppedEvent('step', 1));
    adapter.sendEvent(new StoppedEvent('breakpoint', 1));
    assert.deepEqual(sent, ['stopped', 'stopped']);
    assert.equal(stops, 4, 'two listeners, two stops');
    adapter.dispose();
  });
});
