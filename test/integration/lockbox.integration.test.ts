import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { DebugProtocol } from '@vscode/debugprotocol';
import { Requests } from '../../src/rpc/methods';
import type { RerunResult, RunInfo } from '../../src/rpc/protocol';
import type { TreeElement } from '../../src/trajectories/trajectoryTreeProvider';
import { api, EXTENSION_ID } from '../builders/extension';
import { eventually as waitFor } from '../builders/wait';

// A researcher's own environment in every view: the example package (examples/lockbox-env),
// installed into the host's Python from its folder, trained by its entry-point name `lockbox`
// through the host the extension spawns; its task names in the Trajectories tree, its tips, its
// metrics, a dry rerun and a branch, and the episode debugger replaying one of its episodes (and
// saying where a recording the environment does not reproduce leaves it).

const TASKS = ['escape', 'open-chest'];

/** Training on two cores: two minutes unless said otherwise. */
function eventually<T>(
  what: string,
  probe: () => T | undefined | false | Promise<T | undefined | false>,
  timeoutMs = 120_000,
): Promise<T> {
  return waitFor(what, probe, timeoutMs, 250);
}

async function children(element?: TreeElement): Promise<TreeElement[]> {
  return api().trajectories.getChildren(element);
}

function label(element: TreeElement): string {
  const item = api().trajectories.getTreeItem(element);
  return typeof item.label === 'string' ? item.label : (item.label?.label ?? '');
}

describe('a plug-in environment (the example lockbox) in every view', function () {
  this.timeout(600_000);
  let run: RunInfo;
  const stops: DebugProtocol.StoppedEvent[] = [];
  const outputs: string[] = [];
  let tracker: vscode.Disposable | undefined;

  before(async () => {
    const extension = vscode.extensions.getExtension(EXTENSION_ID)!;
    await extension.activate();
    // As its README says: pip install -e of the folder (no network: the venv builds it).
    const python = path.join(extension.extensionPath, '.venv', 'bin', 'python');
    execFileSync(
      python,
      [
        '-m',
        'pip',
        'install',
        '--quiet',
        '--no-deps',
        '--no-index',
        '--no-build-isolation',
        '--disable-pip-version-check',
        '-e',
        path.join(extension.extensionPath, 'examples', 'lockbox-env'),
      ],
      { timeout: 300_000 },
    );
    tracker = vscode.debug.registerDebugAdapterTrackerFactory('empo2', {
      createDebugAdapterTracker: () => ({
        onDidSendMessage: (message: DebugProtocol.ProtocolMessage) => {
          const event = message as DebugProtocol.Event;
          if (event.type === 'event' && event.event === 'stopped') {
            stops.push(event as DebugProtocol.StoppedEvent);
          }
          if (event.type === 'event' && event.event === 'output') {
            outputs.push((event as DebugProtocol.OutputEvent).body.output);
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

  it('trains lockbox by its name and shows its task names in the Trajectories tree', async () => {
    const { environments } = await api().host.request(Requests.envList, {});
    assert.deepEqual(environments.find((e) => e.name === 'lockbox')?.tasks, TASKS);
    const config = JSON.parse(readFileSync(process.env.EMPO2_TEST_CONFIG!, 'utf8'));
    delete config.env.tasks; // another environment than the built-in one: all of its tasks
    config.env = { ...config.env, name: 'lockbox', max_steps: 4 };
    config.iterations = 1;
    run = (await vscode.commands.executeCommand<RunInfo>('empo2.newRun', { config }))!;
    assert.ok(run, 'run.start answered');
    await eventually('the lockbox run to finish', () => api().runs.get(run.runId)?.info.state === 'finished', 400_000);
    const runNode = await eventually('the run in the tree', async () =>
      (await children()).find((n) => n.kind === 'run' && n.runId === run.runId),
    );
    const iteration = await eventually('iteration 1 in the tree', async () =>
      (await children(runNode)).find((n) => label(n) === 'Iteration 1'),
    );
    const groups = await children(iteration);
    assert.ok(groups.length >= 1);
    for (const group of groups) {
      assert.ok(
        TASKS.some((task) => label(group).startsWith(task)),
        `a task group of lockbox: ${label(group)}`,
      );
    }
    const episodes = await children(groups[0]);
    assert.equal(episodes.length, 2, 'group_size 2');
    const steps = await children(episodes[0]);
    assert.match(label(steps[0]), /^t0: /);
  });

  it('shows its tips and its metrics', async () => {
    await api().tips.load(run.runId);
    const tips = await eventually('the tips of the lockbox run', () =>
      api().tips.list().length > 0 ? api().tips.list() : undefined,
    );
    assert.ok(
      tips.every((tip) => TASKS.includes(tip.variationKey.split('/')[0])),
      tips.map((t) => t.variationKey).join(', '),
    );
    await vscode.commands.executeCommand('empo2.showMetrics', run.runId);
    const shown = await eventually(
      'the metrics panel on the lockbox run',
      () => api().metrics.shown?.source?.runId === run.runId && api().metrics.shown,
    );
    await eventually('its iteration in the chart', () => (api().metrics.shown?.points ?? 0) >= 1);
    assert.ok(shown);
  });

  it('dry-runs the update and reruns it on a branch', async () => {
    const request = { runId: run.runId, variations: ['escape/0'], episodes: 2, iterations: 1, evalEpisodes: 1 };
    const dry = await vscode.commands.executeCommand<RerunResult>('empo2.rerunUpdate', { ...request, dryRun: true });
    assert.ok(dry?.dry_run && typeof dry.loss === 'number');
    assert.deepEqual(dry.variations, ['escape/0']);
    const branch = await vscode.commands.executeCommand<RerunResult>('empo2.rerunUpdate', {
      ...request,
      dryRun: false,
      name: 'lockbox-what-if',
    });
    assert.ok(branch && !branch.dry_run);
    assert.equal(branch.status, 'finished');
    await api().runs.reload();
    const parentNode = await eventually('the parent in the tree', async () =>
      (await children()).find((n) => n.kind === 'run' && n.runId === run.runId),
    );
    assert.ok(
      (await children(parentNode)).some((n) => n.kind === 'run' && n.runId === 'lockbox-what-if'),
      'the branch under its parent',
    );
  });

  it('replays one of its episodes in the debugger, on the recording', async () => {
    const { items } = await api().host.request(Requests.trajectoryList, { runId: run.runId, limit: 1 });
    const started = await vscode.debug.startDebugging(undefined, {
      type: 'empo2',
      request: 'launch',
      name: 'lockbox replay',
      replay: { runId: run.runId, episodeId: items[0].id },
      device: 'cpu',
      stopOnEntry: true,
    });
    assert.ok(started, 'the debug session started');
    await eventually('the stop on entry', () => stops.length >= 1, 300_000);
    assert.equal(stops[0].body.reason, 'entry');
    const session = vscode.debug.activeDebugSession!;
    const episodeScope = async (): Promise<Map<string, string>> => {
      const stack = (await session.customRequest('stackTrace', {
        threadId: 1,
      })) as DebugProtocol.StackTraceResponse['body'];
      const frame = stack.stackFrames[stack.stackFrames.length - 1];
      const scopes = (await session.customRequest('scopes', {
        frameId: frame.id,
      })) as DebugProtocol.ScopesResponse['body'];
      const scope = scopes.scopes.find((s) => s.name === 'Episode')!;
      const vars = (await session.customRequest('variables', {
        variablesReference: scope.variablesReference,
      })) as DebugProtocol.VariablesResponse['body'];
      return new Map(vars.variables.map((v) => [v.name, v.value]));
    };
    const atEntry = await episodeScope();
    assert.equal(atEntry.get('task'), JSON.stringify(items[0].task));
    assert.equal(atEntry.get('replaying'), 'true');
    assert.equal(atEntry.get('left_recording'), 'null');
    await vscode.commands.executeCommand('workbench.action.debug.stepOver');
    await eventually('the stop after turn 0', () => stops.length >= 2, 300_000);
    assert.ok(['step', 'end'].includes(stops[1].body.reason), `${stops[1].body.reason}: ${stops[1].body.text ?? ''}`);
    assert.equal(
      (await episodeScope()).get('left_recording'),
      'null',
      'lockbox resets and steps the same for the same seed',
    );
    await vscode.debug.stopDebugging(session);
  });

  it('says where a replay leaves a recording the environment does not reproduce, with both texts', async () => {
    // The recording's first observation edited by hand: lockbox's reset shows its own one.
    const { items } = await api().host.request(Requests.trajectoryList, { runId: run.runId, limit: 1 });
    const file = path.join(api().runs.get(run.runId)!.info.path, 'trajectories', 'iter-000001.jsonl');
    const edited = 'you are on the roof . (a recording edited by hand)';
    let played = '';
    const lines = readFileSync(file, 'utf8')
      .split('\n')
      .map((line) => {
        if (!line.includes(items[0].id)) {
          return line;
        }
        const episode = JSON.parse(line) as { id: string; steps: Array<{ observation: string }> };
        if (episode.id !== items[0].id) {
          return line;
        }
        played = episode.steps[0].observation;
        episode.steps[0].observation = edited;
        return JSON.stringify(episode);
      });
    assert.ok(played, 'the episode in its iteration file');
    writeFileSync(file, lines.join('\n'));
    const before = stops.length;
    const started = await vscode.debug.startDebugging(undefined, {
      type: 'empo2',
      request: 'launch',
      name: 'lockbox replay edited',
      replay: { runId: run.runId, episodeId: items[0].id },
      device: 'cpu',
      stopOnEntry: true,
    });
    assert.ok(started, 'the debug session started');
    await eventually('the stop on entry', () => stops.length > before, 300_000);
    const said = outputs.find((o) => o.startsWith('The replay left the recording at turn 0:'));
    assert.ok(said, outputs.join(''));
    assert.ok(said.includes(`recorded: ${edited}`) && said.includes(`replayed: ${played}`), said);
    const session = vscode.debug.activeDebugSession!;
    const stack = (await session.customRequest('stackTrace', {
      threadId: 1,
    })) as DebugProtocol.StackTraceResponse['body'];
    const scopes = (await session.customRequest('scopes', {
      frameId: stack.stackFrames[stack.stackFrames.length - 1].id,
    })) as DebugProtocol.ScopesResponse['body'];
    const scope = scopes.scopes.find((s) => s.name === 'Episode')!;
    const vars = (await session.customRequest('variables', {
      variablesReference: scope.variablesReference,
    })) as DebugProtocol.VariablesResponse['body'];
    assert.equal(vars.variables.find((v) => v.name === 'replaying')?.value, 'false');
    const left = vars.variables.find((v) => v.name === 'left_recording')!;
    const shown = (await session.customRequest('variables', {
      variablesReference: left.variablesReference,
    })) as DebugProtocol.VariablesResponse['body'];
    const values = new Map(shown.variables.map((v) => [v.name, v.value]));
    assert.equal(values.get('turn'), '0');
    assert.equal(values.get('recorded'), JSON.stringify(edited));
    assert.equal(values.get('replayed'), JSON.stringify(played));
    await vscode.debug.stopDebugging(session);
  });
});
