import * as assert from 'node:assert/strict';
import { HOST_STOPPED_MESSAGE, stoppedByItself } from '../../src/host/hostStopped';
import type { HostState } from '../../src/host/hostState';

// A host that exits cleanly while in use (Ctrl-C in its terminal) is announced; Stop Host,
// Restart Host and a crash are not announced this way.

describe('a host that stops by itself', () => {
  it('is one that went from serving (or being redialled) to stopped without Stop Host', () => {
    const path = (...states: HostState[]) => states.slice(1).some((next, i) => stoppedByItself(states[i], next));
    assert.equal(path('running', 'stopped'), true, 'its process exited 0 while connected');
    assert.equal(
      path('running', 'reconnecting', 'stopped'),
      true,
      'the socket closed first, then the process exited 0',
    );
    assert.equal(path('running', 'stopping', 'stopped'), false, 'Stop Host');
    assert.equal(path('running', 'stopping', 'stopped', 'starting', 'running'), false, 'Restart Host');
    assert.equal(path('running', 'crashed'), false, 'a crash has its own report');
    assert.equal(path('starting', 'stopped'), false, 'a start that was cancelled');
  });

  it('says that nothing is live any more, what happened to the run, and how to go on', () => {
    assert.match(HOST_STOPPED_MESSAGE, /stopped by itself/);
    assert.match(HOST_STOPPED_MESSAGE, /nothing here is live/);
    assert.match(HOST_STOPPED_MESSAGE, /interrupted/);
    assert.match(HOST_STOPPED_MESSAGE, /Start Host, then Resume Run/);
  });
});
