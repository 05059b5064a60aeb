import * as assert from 'node:assert/strict';
import { Emitter } from '../../src/common/event';
import { showPendingNotice } from '../../src/runs/pendingNotice';
import type { RunEntry } from '../../src/runs/runsModel';
import { aRunInfo } from '../builders/protocol';

// "builtin-1 pauses after its current iteration" is true until the run has paused: then the
// status bar says "paused", and the message beside it goes.

function setup() {
  const changes = new Emitter<RunEntry>();
  const shown: Array<{ text: string; hidden: boolean }> = [];
  const deps = {
    onDidChangeRun: changes.event,
    show: (text: string) => {
      const message = { text, hidden: false };
      shown.push(message);
      return { dispose: () => (message.hidden = true) };
    },
  };
  const change = (runId: string, state: string) =>
    changes.fire({
      info: aRunInfo({ runId, state: state as RunEntry['info']['state'], live: true }),
      progress: null,
      latestMetrics: null,
      trajectoryIteration: 0,
      config: undefined,
    });
  return { deps, shown, change };
}

describe('the message a Pause or Stop leaves in the status bar', () => {
  it('goes when the run has paused, not when another run changes', () => {
    const { deps, shown, change } = setup();
    showPendingNotice(deps, 'builtin-1', 'pausing', 'EMPO²: builtin-1 pauses after its current iteration');
    assert.deepEqual(shown, [{ text: 'EMPO²: builtin-1 pauses after its current iteration', hidden: false }]);
    change('other', 'paused');
    change('builtin-1', 'pausing');
    assert.equal(shown[0].hidden, false);
    change('builtin-1', 'paused');
    assert.equal(shown[0].hidden, true);
  });

  it('is not shown when the run had already paused, and goes after its time at the latest', async () => {
    const { deps, shown } = setup();
    showPendingNotice(deps, 'builtin-1', 'paused', 'EMPO²: builtin-1 pauses after its current iteration');
    assert.equal(shown.length, 0);
    showPendingNotice(deps, 'builtin-1', 'stopping', 'EMPO²: builtin-1 stops at its next iteration boundary', 20);
    await new Promise((resolve) => setTimeout(resolve, 40));
    assert.equal(shown[0].hidden, true);
  });
});
