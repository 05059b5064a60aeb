import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { HostProcess } from '../../src/host/hostProcess';
import { RpcClient } from '../../src/rpc/client';
import { isRpcError } from '../../src/rpc/errors';
import { Notifications, Requests } from '../../src/rpc/methods';
import { PROTOCOL_VERSION } from '../../src/rpc/protocol';
import { connectWebSocket } from '../../src/rpc/wsTransport';

// Records a transcript of a real session with `empo2-host serve` for the unit tests to replay
// (test/fixtures/transcripts/*.jsonl): every frame in both directions, one JSON line each,
// `{"direction": "client→host" | "host→client", "message": …}`.
//
//   node out/tests/test/tools/recordTranscript.js <python> <tiny-policy-folder> <out.jsonl>
//
// The session: initialize, a short training run to its end, the trajectory, memory and metrics
// reads the extension makes, a tip edit, a stale edit (VersionConflict), a path outside the run
// roots (PathNotAllowed), shutdown.

async function main(): Promise<void> {
  const [python, policy, out] = process.argv.slice(2).map((arg) => path.resolve(arg));
  const root = mkdtempSync(path.join(os.tmpdir(), 'empo2-transcript-'));
  const lines: string[] = [];
  const host = new HostProcess({
    python,
    args: ['--run-root', path.join(root, '.empo2', 'runs')],
    cwd: root,
    env: { HF_HUB_OFFLINE: '1', TRANSFORMERS_OFFLINE: '1' },
  });
  host.onStderrLine((line) => process.stderr.write(`[host] ${line}\n`));
  try {
    const ready = await host.ready;
    const client = new RpcClient(await connectWebSocket(`ws://127.0.0.1:${ready.port}`, host.token), {
      defaultTimeoutMs: 300_000,
      observe: (direction, message) => lines.push(JSON.stringify({ direction, message })),
    });
    const finished = new Promise<void>((resolve) =>
      client.on(
        Notifications.runState,
        ({ run }) => ['finished', 'failed', 'stopped'].includes(run.state) && resolve(),
      ),
    );
    await client.request(Requests.initialize, {
      protocolVersion: PROTOCOL_VERSION,
      clientInfo: { name: 'transcript-recorder', version: '1' },
      capabilities: { logMessages: false, progress: true },
    });
    await client.request(Requests.ping, {});
    await client.request(Requests.runList, {});
    const config = {
      iterations: 1,
      env: { tasks: ['power-device'], max_steps: 3, train_variations: [0] },
      policy: { model: policy, max_action_tokens: 4, max_tip_tokens: 8 },
      algo: { batch_tasks: 1, group_size: 2, p_memory: 1.0, q_off_policy: 1.0, minibatches: 1 },
      eval: { every: 0 },
    };
    const { run } = await client.request(Requests.runStart, { config, name: 'transcript' });
    await finished;
    await client.request(Requests.runStatus, { runId: run.runId });
    await client.request(Requests.runMetrics, { runId: run.runId });
    const page = await client.request(Requests.trajectoryList, {
      runId: run.runId,
      filter: { iteration: 1 },
      limit: 1000,
    });
    await client.request(Requests.trajectoryGet, { runId: run.runId, episodeId: page.items[0].id });
    const tips = await client.request(Requests.memoryList, { runId: run.runId, limit: 1000 });
    const tip = tips.items[0];
    await client.request(Requests.memoryUpdate, {
      runId: run.runId,
      tipId: tip.id,
      text: 'open the shed before the kitchen',
      expectedVersion: tip.version,
    });
    await client
      .request(Requests.memoryUpdate, {
        runId: run.runId,
        tipId: tip.id,
        text: 'a stale edit',
        expectedVersion: tip.version,
      })
      .catch((e) => {
        if (!isRpcError(e)) throw e;
      });
    await client.request(Requests.memoryHistory, { runId: run.runId, tipId: tip.id });
    await client.request(Requests.memoryAdd, {
      runId: run.runId,
      variationKey: 'power-device/0',
      text: 'the lamp needs a bulb',
    });
    await client.request(Requests.checkpointList, { runId: run.runId });
    await client.request(Requests.runOpen, { path: '/etc' }).catch((e) => {
      if (!isRpcError(e)) throw e;
    });
    await client.request(Requests.shutdown, {});
    await host.exited;
    mkdirSync(path.dirname(out), { recursive: true });
    // The recording machine's temporary folder never lands in the fixture: its paths read as an
    // invented project's (the check in scripts/check-product-language.py refuses machine paths).
    const project = '/home/ada/project';
    writeFileSync(out, lines.map((line) => line.split(root).join(project)).join('\n') + '\n');
    console.log(`${lines.length} messages → ${out}`);
  } finally {
    await host.stop(5_000);
    rmSync(root, { recursive: true, force: true });
  }
}

main().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
