import * as assert from 'node:assert/strict';
import { describeSession } from '../../src/debug/launchConfig';
import { aDebugSession } from '../builders/debug';

// The debug console's line about a session: what the host says about its weights and its run is
// what a person reads before any log-prob of the session.

describe('the debug console line of a session', () => {
  const replay = { episodeId: 'i000001-e0005', turns: 9, firstDifferentTurn: 8, maxLogprobError: 0.78 };

  it("carries the host's sentence when the checkpoint that played the episode is not the one replaying it", () => {
    const note =
      'Checkpoint 0, which played this episode, is no longer kept (the run keeps its newest 2: keep_checkpoints), so checkpoint 4 replays it and its log π differ from the recorded ones (max |Δ log p| 7.8e-1).';
    const line = describeSession(aDebugSession({ checkpoint: 4, replay: { ...replay, playedBy: 0, note } }));
    assert.ok(
      line.includes(
        'checkpoint 4 on cpu. Replaying i000001-e0005: 9 turns, max |Δ log p| 7.8e-1, first different turn 8. Checkpoint 0, which played',
      ),
      line,
    );
  });

  it('says nothing more when the checkpoint that played it replays it', () => {
    const line = describeSession(
      aDebugSession({ checkpoint: 0, replay: { ...replay, maxLogprobError: 3.5e-6, playedBy: 0, note: null } }),
    );
    assert.ok(line.endsWith('max |Δ log p| 3.5e-6, first different turn 8.'), line);
  });

  it("names the run's real state: paused is not training", () => {
    assert.ok(
      describeSession(aDebugSession({ runState: 'paused' })).endsWith(
        '(The run is paused: this session uses its own read-only copy of the weights.)',
      ),
    );
    assert.ok(
      describeSession(aDebugSession({ runState: 'running', alongsideTraining: true })).includes(
        '(The run is training:',
      ),
    );
    assert.ok(!describeSession(aDebugSession({ runState: null })).includes('The run is'));
  });
});
