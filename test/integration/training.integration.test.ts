import * as assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { HostProcess } from '../../src/host/hostProcess';
import { Requests } from '../../src/rpc/methods';
import type { RunInfo, Tip, TrajectoryStep } from '../../src/rpc/protocol';
import type { TreeElement } from '../../src/trajectories/trajectoryTreeProvider';
import { eventually as waitFor, isAlive as alive } from '../builders/wait';
import { api, EXTENSION_ID } from '../builders/extension';

// The extension against the real Python host, inside a real VS Code extension host: start it,
// train the tiny policy for two iterations (pausing after the first), watch the tree fill, open
// an episode, edit tips while paused and check that the very next retrieval in training sees the
// edits, show the metrics, open a 10,000-episode run and time every level of the tree, then kill
// the host and see the crash reported, and stop it leaving no process behind.
//
// The harness (test/harness/runIntegration.mjs) passes the tiny config and the synthetic run's
// folder in the environment.

const LIMIT_MS = 200;

/** Training on two cores is slow: a minute unless said otherwise. */
function eventually<T>(
  what: string,
  probe: () => T | undefined | false | Promise<T | undefined | false>,
  timeoutMs = 60_000,
): Promise<T> {
  return waitFor(what, probe, timeoutMs);
}

async function children(element?: TreeElement): Promise<TreeElement[]> {
  return api().trajectories.getChildren(element);
}

/** The written iteration `n` (the row of an iteration in progress has the same label, and its
 * episodes have no steps to open until the iteration is written). */
async function writtenIteration(runNode: TreeElement, n: number): Promise<TreeElement | undefined> {
  return (await children(runNode)).find(
    (e) => label(e) === `Iteration ${n}` && api().trajectories.getTreeItem(e).contextValue !== 'empo2.liveIteration',
  );
}

function label(element: TreeElement): string {
  const item = api().trajectories.getTreeItem(element);
  return typeof item.label === 'string' ? item.label : (item.label?.label ?? '');
}

const measurements: Record<string, number | string> = {};

describe('EMPO² Studio with the real training host', function () {
  this.timeout(240_000);
  let run: RunInfo;
  let hostPid: number;

  before(async () => {
    await vscode.extensions.getExtension(EXTENSION_ID)!.activate();
  });

  after(() => {
    if (process.env.EMPO2_TEST_MEASUREMENTS) {
      writeFileSync(process.env.EMPO2_TEST_MEASUREMENTS, JSON.stringify(measurements, null, 2) + '\n');
    }
  });

  it('starts the host from its command: spawned, ready, connected, on the CPU', async () => {
    const started = Date.now();
    await vscode.commands.executeCommand('empo2.startHost');
    const session = api().host.current;
    assert.ok(session, 'connected');
    measurements.hostStartSeconds = (Date.now() - started) / 1000;
    assert.equal(api().host.state.state, 'running');
    assert.equal(session.remote, false);
    assert.equal(session.init.serverInfo.device?.kind, 'cpu');
    assert.ok(session.init.capabilities.presets.includes('builtin'));
    hostPid = session.init.serverInfo.pid;
    assert.ok(alive(hostPid));
  });

  it('starts a training run from a config file and fills the tree while it trains', async () => {
    const config = JSON.parse(readFileSync(process.env.EMPO2_TEST_CONFIG!, 'utf8'));
    run = (await vscode.commands.executeCommand<RunInfo>('empo2.newRun', { config, pauseAfterIteration: 1 }))!;
    assert.ok(run, 'run.start answered');
    assert.equal(run.live, true);
    const runNode = await eventually('the run in the tree', async () =>
      (await children()).find((n) => n.kind === 'run' && n.runId === run.runId),
    );
    const iteration1 = await eventually('iteration 1 written in the tree', () => writtenIteration(runNode, 1), 180_000);
    // The run is still live (it pauses after iteration 1): the tree filled during training.
    assert.equal(api().runs.get(run.runId)?.info.live, true);
    const groups = await children(iteration1);
    assert.ok(groups.length >= 1);
    const episodes = await children(groups[0]);
    assert.equal(episodes.length, 2, 'group_size 2: two rollouts per task');
    const description = String(api().trajectories.getTreeItem(episodes[0]).description);
    // The row shows outcome and score; length and modes are in the tooltip (rows that fit a
    // default sidebar).
    assert.match(description, /^[✓✗] score \S+$/);
    const tip = api().trajectories.getTreeItem(episodes[0]).tooltip as vscode.MarkdownString | string | undefined;
    const tooltip = typeof tip === 'string' ? tip : (tip?.value ?? '');
    assert.match(
      tooltip,
      /Rollout (with memory|memory-free), update (on-policy|on-policy with tips|off-policy), \d+ steps/,
    );
    const steps = await children(episodes[0]);
    assert.ok(steps.length >= 1 && steps.length <= 5);
    assert.match(label(steps[0]), /^t0: /);
  });

  it('opens an episode in the read-only episode view', async () => {
    const runNode = (await children()).find((n) => n.kind === 'run' && n.runId === run.runId)!;
    const iteration1 = (await writtenIteration(runNode, 1))!;
    const episode = (await children((await children(iteration1))[0]))[0];
    assert.equal(episode.kind, 'episode');
    await api().episodes.open(run.runId, episode.kind === 'episode' ? episode.episodeId : '');
    const shown = await eventually('the episode view', () => api().episodes.panel.current);
    assert.equal(shown.episode.id, episode.kind === 'episode' ? episode.episodeId : '');
    assert.ok(shown.episode.steps.length > 0);
    assert.ok(shown.episode.description.length > 0);
  });

  it('edits every tip while paused, and the very next retrieval in training sees the edits', async () => {
    await eventually(
      'the run to pause after iteration 1',
      () => api().runs.get(run.runId)?.info.state === 'paused',
      120_000,
    );
    await eventually('the tips of the run', async () => {
      await api().tips.whenLoaded();
      return api().tips.currentRunId === run.runId && api().tips.list().length > 0;
    });
    const edited = new Map<string, string>();
    for (const tip of api().tips.list()) {
      const text = `EDITED ${tip.id}: open the shed before the kitchen`;
      const saved = await vscode.commands.executeCommand<Tip>('empo2.editTip', tip.id, text);
      assert.equal(saved?.text, text);
      assert.equal(saved?.version, tip.version + 1);
      edited.set(tip.id, text);
    }
    // The host has it: read back through a separate request.
    const [firstId, firstText] = [...edited][0];
    const { tip } = await api().host.request(Requests.memoryGet, { runId: run.runId, tipId: firstId });
    assert.equal(tip.text, firstText);

    await vscode.commands.executeCommand('empo2.resumeRun');
    const runNode = (await children()).find((n) => n.kind === 'run' && n.runId === run.runId)!;
    const iteration2 = await eventually('iteration 2 written in the tree', () => writtenIteration(runNode, 2), 180_000);
    const shown: Array<[string, string]> = [];
    for (const group of await children(iteration2)) {
      for (const episode of await children(group)) {
        if (episode.kind === 'episode') {
          const { episode: full } = await api().trajectories.model.episode(run.runId, episode.episodeId);
          shown.push(
            ...full.steps.flatMap((step: TrajectoryStep) =>
              step.tip_ids.map((id, i): [string, string] => [id, step.tips[i]]),
            ),
          );
        }
      }
    }
    assert.ok(shown.length > 0, 'iteration 2 retrieved tips');
    const fromBefore = shown.filter(([id]) => edited.has(id));
    assert.ok(fromBefore.length > 0, 'some retrieved tips were written in iteration 1');
    for (const [id, text] of fromBefore) {
      assert.ok(text.includes(edited.get(id)!), `tip ${id} was retrieved as edited: ${text}`);
    }
  });

  it("shows the run's metrics, growing as iterations finish", async () => {
    await vscode.commands.executeCommand('empo2.showMetrics', run.runId);
    const shown = await eventually('the metrics panel', () => api().metrics.shown);
    assert.equal(shown.source?.runId, run.runId);
    await eventually('two iterations of metrics', () => (api().metrics.shown?.points ?? 0) >= 2, 120_000);
    await eventually('the run to finish', () => api().runs.get(run.runId)?.info.state === 'finished', 120_000);
  });

  it('answers a stale tip edit with a conflict and leaves the tip as it was', async () => {
    const tip = api().tips.list()[0];
    const outcome = await api().tips.update({
      tipId: tip.id,
      text: 'an edit made on an old copy',
      expectedVersion: tip.version - 1,
    });
    assert.equal(outcome.kind, 'conflict');
    assert.equal(outcome.kind === 'conflict' && outcome.current.text, tip.text);
  });

  it('keeps a deleted tip findable: Show Tip History reads it, and the panel gets it marked deleted', async () => {
    const tip = api().tips.list()[0];
    assert.equal(await vscode.commands.executeCommand<boolean>('empo2.deleteTip', tip.id, true), true);
    assert.equal(api().tips.get(tip.id), undefined, 'no longer a live tip');
    const document = await vscode.commands.executeCommand<vscode.TextDocument>('empo2.showTipHistory', tip.id);
    const text = document?.getText() ?? '';
    assert.match(text, new RegExp(`# Tip ${tip.id}`));
    assert.match(text, /deleted: retrieval no longer returns it/);
    assert.match(text, /## v\d+ · deleted by (you|\S+)/, 'the deletion is a version of its history');
    assert.match(text, /## v1 · written by the policy/, 'the policy named as the policy');
    // Read-only, never an unsaved Untitled editor: closing it asks nothing.
    assert.equal(document?.uri.scheme, 'empo2-tip-history');
    assert.equal(document?.isDirty, false);
    assert.equal(document?.isUntitled, false);
    assert.equal(document?.languageId, 'markdown');
    await vscode.commands.executeCommand('workbench.action.closeActiveEditor');
    // After a reload (what a reconnect or reopening the run does) it is still there, from the host.
    await api().tips.load(run.runId);
    assert.equal(api().tips.find(tip.id)?.deleted, true);
  });

  it(`opens a run of 10,000 episodes and expands every level in under ${LIMIT_MS} ms`, async () => {
    const folder = process.env.EMPO2_TEST_BIG_RUN!;
    let started = Date.now();
    const status = await vscode.commands.executeCommand<{ runId: string; episodes: number }>(
      'empo2.openRunFolder',
      folder,
    );
    measurements.openLargeRunMs = Date.now() - started;
    assert.equal(status?.episodes, Number(process.env.EMPO2_TEST_BIG_EPISODES));
    const timed = async (what: string, element?: TreeElement): Promise<TreeElement[]> => {
      started = performance.now();
      const result = await children(element);
      result.forEach((child) => api().trajectories.getTreeItem(child));
      const ms = performance.now() - started;
      measurements[`expand ${what} (ms)`] = Math.round(ms * 10) / 10;
      assert.ok(ms < LIMIT_MS, `${what} took ${ms.toFixed(0)} ms`);
      return result;
    };
    const roots = await timed('root');
    const runNode = roots.find((n) => n.kind === 'run' && n.runId === status!.runId)!;
    const iterations = await timed('run', runNode);
    assert.equal(iterations.length, 79);
    for (const [index, name] of [
      [0, 'newest iteration'],
      [39, 'middle iteration'],
      [78, 'first iteration'],
    ] as const) {
      const groups = await timed(name, iterations[index]);
      assert.equal(groups.length, 16, '16 tasks per iteration');
      const episodes = await timed(`task group of the ${name}`, groups[15]);
      assert.equal(episodes.length, 8, '8 rollouts per task');
      const steps = await timed(`episode of the ${name}`, episodes[7]);
      assert.equal(steps.length, 3);
      await timed(`step of the ${name}`, steps[2]);
    }
  });

  it('reconnects with backoff when the connection drops while the host lives', async () => {
    // The metrics panel (open since an earlier test) behind a document the person reads.
    assert.ok(api().metrics.shown, 'the metrics panel is open');
    const reading = await vscode.workspace.openTextDocument({ content: 'notes', language: 'markdown' });
    await vscode.window.showTextDocument(reading, { preview: false });
    const before = api().host.current!;
    before.client.close('test: the connection dropped');
    const after = await eventually(
      'a new connection',
      () => api().host.current !== before && api().host.current,
      30_000,
    );
    assert.equal(api().host.state.state, 'running');
    assert.equal(after.init.serverInfo.pid, hostPid, 'the same host process');
    assert.notEqual(after.init.connection, before.init.connection);
    // Views reload after a reconnect: the runs are listed again.
    await eventually('the runs to be listed again', () => api().runs.get(run.runId));
    // The metrics reload too (a finished run's records, milliseconds) without taking the front.
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    assert.equal(vscode.window.activeTextEditor?.document, reading, 'the document read stays in front');
    await vscode.commands.executeCommand('workbench.action.revertAndCloseActiveEditor');
  });

  it('reports a host that dies with a crash, and restarts it', async () => {
    process.kill(hostPid, 'SIGKILL');
    await eventually('the crash to be noticed', () => api().host.state.state === 'crashed', 30_000);
    assert.equal(api().host.current, undefined);
    await vscode.commands.executeCommand('empo2.restartHost');
    assert.equal(api().host.state.state, 'running');
    hostPid = api().host.current!.init.serverInfo.pid;
    // The killed host's runs are still there to browse.
    await eventually('the runs to be listed again', () => api().runs.get(run.runId));
  });

  it('keeps the host running here when Connect to Remote Host cannot reach the remote one', async () => {
    const before = api().host.current!;
    // Port 9 (discard) has no listener: the remote host cannot be reached.
    assert.equal(await vscode.commands.executeCommand('empo2.connectRemote', 'ws://127.0.0.1:9', 'any-token'), false);
    assert.equal(api().host.current, before, 'the same connection, never dropped');
    assert.equal(api().host.state.state, 'running');
    assert.ok(alive(hostPid));
  });

  it('stops the host and leaves no process behind', async () => {
    assert.ok(alive(hostPid));
    await vscode.commands.executeCommand('empo2.stopHost');
    assert.equal(api().host.state.state, 'stopped');
    await eventually('the host process to exit', () => !alive(hostPid), 15_000);
  });

  it('connects to a host running elsewhere with its URL and token', async () => {
    // A host this test starts itself, as a person would on a GPU box behind an SSH tunnel.
    const python = path.resolve(__dirname, '../../../../.venv/bin/python');
    const runRoot = path.dirname(process.env.EMPO2_TEST_BIG_RUN!);
    const remote = new HostProcess({ python, args: ['--run-root', runRoot], cwd: runRoot });
    try {
      const ready = await remote.ready;
      const url = `ws://127.0.0.1:${ready.port}`;
      assert.equal(await vscode.commands.executeCommand('empo2.connectRemote', url, remote.token), true);
      const session = api().host.current!;
      assert.equal(session.remote, true);
      assert.equal(session.init.serverInfo.pid, ready.pid);
      await eventually("the remote host's runs", () => api().runs.get(path.basename(process.env.EMPO2_TEST_BIG_RUN!)));
      assert.equal(vscode.workspace.getConfiguration('empo2').get('remoteUrl'), url, 'the URL is remembered');
      // Stopping a remote host only disconnects: the process there keeps running.
      await vscode.commands.executeCommand('empo2.stopHost');
      assert.equal(api().host.current, undefined);
      assert.ok(alive(ready.pid));
    } finally {
      await vscode.workspace
        .getConfiguration('empo2')
        .update('remoteUrl', undefined, vscode.ConfigurationTarget.Global);
      await remote.stop(5_000);
    }
  });
});
