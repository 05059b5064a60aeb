import * as assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { HostProcess } from '../../src/host/hostProcess';
import { RpcClient } from '../../src/rpc/client';
import { Requests } from '../../src/rpc/methods';
import { PROTOCOL_VERSION } from '../../src/rpc/protocol';
import { connectWebSocket } from '../../src/rpc/wsTransport';
import { FlakyProxy } from '../tools/flakyProxy';
import { api } from '../builders/extension';
import { eventually as waitFor } from '../builders/wait';

// The extension and a remote host (started here, as on a GPU box) behind a flaky link: the
// project's TCP proxy (host/tests/flaky_proxy.py) freezes it, cuts it in the middle of a tip
// save, and refuses it for longer than the fast retries. Checks the connection health every view
// reads, the times a person would feel (detecting a freeze, using a link that is back), and that
// the memory, read straight from the host past the proxy, holds the edit exactly once.

/** Half a minute unless said otherwise; polled every 50 ms, as the link's times are measured by it. */
function eventually<T>(
  what: string,
  probe: () => T | undefined | false | Promise<T | undefined | false>,
  timeoutMs = 30_000,
): Promise<T> {
  return waitFor(what, probe, timeoutMs, 50);
}

const measurements: Record<string, number> = {};

describe('A remote host behind a flaky link', function () {
  this.timeout(240_000);
  const python = path.resolve(__dirname, '../../../../.venv/bin/python');
  const runRoot = path.dirname(process.env.EMPO2_TEST_BIG_RUN!);
  const runId = path.basename(process.env.EMPO2_TEST_BIG_RUN!);
  let remote: HostProcess;
  let proxy: FlakyProxy;
  let direct: RpcClient;
  let tipId = '';

  const kind = () => api().host.health.health.kind;

  before(async () => {
    remote = new HostProcess({ python, args: ['--run-root', runRoot], cwd: runRoot });
    const ready = await remote.ready;
    proxy = await FlakyProxy.start(python, ready.port, 600);
    direct = new RpcClient(await connectWebSocket(`ws://127.0.0.1:${ready.port}`, remote.token), {
      defaultTimeoutMs: 120_000,
    });
    await direct.request(Requests.initialize, {
      protocolVersion: PROTOCOL_VERSION,
      clientInfo: { name: 'observer', version: '1' },
      capabilities: { logMessages: false },
    });
    const { tip } = await direct.request(Requests.memoryAdd, {
      runId,
      variationKey: 'power-device/0',
      text: 'Look in the shed.',
    });
    tipId = tip.id;
  });

  after(async () => {
    await vscode.commands.executeCommand('empo2.stopHost');
    await vscode.workspace.getConfiguration('empo2').update('remoteUrl', undefined, vscode.ConfigurationTarget.Global);
    direct?.dispose();
    proxy?.stop();
    await remote?.stop(5_000);
    if (process.env.EMPO2_TEST_MEASUREMENTS) {
      writeFileSync(
        process.env.EMPO2_TEST_MEASUREMENTS.replace(/\.json$/, '-flaky-link.json'),
        JSON.stringify(measurements, null, 2) + '\n',
      );
    }
  });

  it('connects through the tunnel', async () => {
    assert.equal(await vscode.commands.executeCommand('empo2.connectRemote', proxy.url, remote.token), true);
    assert.equal(kind(), 'connected');
    await api().tips.load(runId);
    assert.ok(api().tips.get(tipId));
  });

  it('notices a frozen link within a few seconds, keeps the tips, and uses the link at once when it thaws', async () => {
    const frozenAt = Date.now();
    await proxy.freeze();
    await eventually('reconnecting', () => kind() === 'reconnecting', 15_000);
    measurements['freeze: time to detect (s)'] = (Date.now() - frozenAt) / 1000;
    assert.ok(
      measurements['freeze: time to detect (s)'] < 8,
      `detected after ${measurements['freeze: time to detect (s)']} s`,
    );
    assert.ok(api().tips.get(tipId), 'the tips stay while reconnecting');
    await assert.rejects(api().host.request(Requests.memoryList, { runId }), /being restored/);
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    const thawedAt = Date.now();
    await proxy.thaw();
    await eventually('connected again', () => kind() === 'connected', 15_000);
    measurements['freeze: thaw to connected (s)'] = (Date.now() - thawedAt) / 1000;
    assert.ok(
      measurements['freeze: thaw to connected (s)'] < 3,
      `took ${measurements['freeze: thaw to connected (s)']} s`,
    );
  });

  it('sends a save cut in flight again with its edit id; the host applied it once and the model shows it', async () => {
    const text = `Open the shed first (${Date.now()}).`;
    const version = api().tips.get(tipId)!.version;
    await proxy.freeze('down'); // the save reaches the host; its answer does not come back
    const saving = api().tips.update({ tipId, text, expectedVersion: version, editId: `edit-${Date.now()}` });
    await eventually(
      'the host to apply the save',
      async () => (await direct.request(Requests.memoryGet, { runId, tipId })).tip.text === text,
      30_000,
    );
    const cutAt = Date.now();
    await proxy.cut();
    await proxy.thaw();
    const outcome = await saving;
    measurements['cut during a save: cut to saved (s)'] = (Date.now() - cutAt) / 1000;
    assert.equal(outcome.kind, 'saved');
    assert.ok(outcome.kind === 'saved' && outcome.replayed, 'the retry got the outcome the host recorded');
    assert.equal(outcome.kind === 'saved' && outcome.tip.text, text);
    const { versions } = await direct.request(Requests.memoryHistory, { runId, tipId });
    assert.equal(versions.filter((v) => v.text === text).length, 1, 'the edit is in the memory once');
  });

  it('after an outage longer than the fast retries: lost, retrying in the background; Reconnect uses the link at once', async () => {
    await proxy.refuse();
    const downAt = Date.now();
    await proxy.cut();
    await eventually('lost', () => kind() === 'lost', 60_000);
    measurements['outage: down to lost (s)'] = (Date.now() - downAt) / 1000;
    const health = api().host.health.health;
    assert.ok(
      health.kind === 'lost' && health.remote && health.nextTryAt !== undefined,
      'a remote host is retried in the background',
    );
    assert.ok(api().tips.get(tipId), 'the tips are still shown');
    await proxy.accept();
    const clickedAt = Date.now();
    await vscode.commands.executeCommand('empo2.reconnect');
    await eventually('connected again', () => kind() === 'connected', 15_000);
    measurements['outage: Reconnect to connected (s)'] = (Date.now() - clickedAt) / 1000;
    assert.ok(measurements['outage: Reconnect to connected (s)'] < 3);
    console.log(`flaky link: ${JSON.stringify(measurements)}`);
  });
});
