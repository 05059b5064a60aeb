import * as assert from 'node:assert/strict';
import { connectFailure } from '../../src/host/hostSession';
import { switchToRemote, type RemoteSwitch } from '../../src/host/remoteSwitch';
import { ConnectError, connectWebSocket } from '../../src/rpc/wsTransport';

/** The steps of a switch, recording what was done; a local host training unless said otherwise. */
function aSwitch(overrides: Partial<RemoteSwitch> = {}): { steps: RemoteSwitch; done: string[] } {
  const done: string[] = [];
  const steps: RemoteSwitch = {
    connected: 'local',
    probe: async () => void done.push('probe'),
    beforeStop: async () => (done.push('ask'), { now: false }),
    connect: async (now) => void done.push(now ? 'stop now, connect' : 'stop, connect'),
    ...overrides,
  };
  return { steps, done };
}

describe('connecting to a remote host while a host runs here', () => {
  it('asks the run guard before the local host stops, and stops it as answered', async () => {
    const { steps, done } = aSwitch({ beforeStop: async () => (done.push('ask'), { now: true }) });
    assert.equal(await switchToRemote(steps), true);
    assert.deepEqual(done, ['probe', 'ask', 'stop now, connect']);
  });

  it('leaves the local host and its run alone when the question is cancelled', async () => {
    const { steps, done } = aSwitch({ beforeStop: async () => (done.push('ask'), undefined) });
    assert.equal(await switchToRemote(steps), false);
    assert.deepEqual(done, ['probe', 'ask']);
  });

  it('leaves the local host alone, asking nothing, when the remote cannot be reached', async () => {
    const unreachable = new ConnectError('cannot connect to ws://127.0.0.1:9: connect ECONNREFUSED 127.0.0.1:9');
    const { steps, done } = aSwitch({ probe: () => Promise.reject(unreachable) });
    await assert.rejects(switchToRemote(steps), unreachable);
    assert.deepEqual(done, []);
  });

  it('keeps a remote host until the new one answers, without asking; with no host, just connects', async () => {
    const remote = aSwitch({ connected: 'remote' });
    assert.equal(await switchToRemote(remote.steps), true);
    assert.deepEqual(remote.done, ['probe', 'stop, connect']);
    const none = aSwitch({ connected: 'none' });
    assert.equal(await switchToRemote(none.steps), true);
    assert.deepEqual(none.done, ['stop, connect']);
  });
});

describe('a host that cannot be reached', () => {
  it('is named once in the sentence', async () => {
    const url = 'ws://127.0.0.1:9';
    const error = await connectWebSocket(url, 'token', { openTimeoutMs: 2_000 }).then(
      () => assert.fail('port 9 answered'),
      (e: unknown) => e,
    );
    const sentence = connectFailure(url, error);
    assert.match(sentence, /^cannot connect to ws:\/\/127\.0\.0\.1:9: \S/);
    assert.equal(sentence.split(url).length - 1, 1, sentence);
    assert.equal(
      connectFailure(url, new Error('the host speaks protocol 1')),
      `cannot connect to ${url}: the host speaks protocol 1`,
    );
  });
});
