import * as vscode from 'vscode';
import { CommandBase } from '../common/command';
import { Disposable } from '../common/lifecycle';
import type { HostApi } from '../host/hostApi';
import { DEBUG_START_PARAMS_DEFAULTS, ROLLOUT_MODES } from '../rpc/protocol';
import type { RunsModel } from '../runs/runsModel';
import type { TrajectoryModel } from '../trajectories/trajectoryModel';
import type { TrajectoryNode } from '../trajectories/trajectoryNodes';
import { Empo2DebugAdapter, type Empo2LaunchArguments } from './adapter';
import type { EpisodeView, LeftRecording } from './replayMismatch';
import { EPISODE_SCHEME } from './episodeDocument';
import { withCurrentRun } from './launchConfig';
import { TokenView } from './tokenView';

// The `empo2` debug type in VS Code: the inline adapter, the launch configuration provider, the
// episode documents (one line per turn, breakpoints in their gutter) and "EMPO²: Debug Episode…".

export const DEBUG_TYPE = 'empo2';

/** A new episode's seed, and its rollout mode unless the person picks one: the host's defaults. */
const { seed: DEFAULT_SEED, mode: DEFAULT_MODE } = DEBUG_START_PARAMS_DEFAULTS;

/** The read-only `empo2-episode:` documents the adapters write. */
export class EpisodeDocuments extends Disposable implements vscode.TextDocumentContentProvider, EpisodeView {
  private readonly texts = new Map<string, string>();
  private readonly changed = this._register(new vscode.EventEmitter<vscode.Uri>());
  readonly onDidChange = this.changed.event;

  provideTextDocumentContent(uri: vscode.Uri): string {
    return this.texts.get(uri.path) ?? 'This episode is not being debugged any more.\n';
  }

  update(path: string, text: string): void {
    this.texts.set(path, text);
    this.changed.fire(vscode.Uri.from({ scheme: EPISODE_SCHEME, path }));
  }

  forget(path: string): void {
    // The text stays readable after the session (the last state); only a new session replaces it.
    void path;
  }
}

class ConfigurationProvider implements vscode.DebugConfigurationProvider {
  constructor(private readonly runs: RunsModel) {}

  provideDebugConfigurations(): vscode.DebugConfiguration[] {
    return [defaultConfiguration(this.runs.current?.info.runId)];
  }

  /** F5 without a launch.json: an episode of the current run's first task. */
  resolveDebugConfiguration(
    _folder: vscode.WorkspaceFolder | undefined,
    config: vscode.DebugConfiguration,
  ): vscode.DebugConfiguration | undefined {
    if (!config.type && !config.request && !config.name) {
      const runId = this.runs.current?.info.runId;
      if (!runId) {
        void vscode.window.showErrorMessage(
          'Open or start a run first: an EMPO² debug session plays an episode with one of its checkpoints.',
        );
        return undefined;
      }
      return defaultConfiguration(runId);
    }
    if (config.type === DEBUG_TYPE) {
      const resolved = withCurrentRun(config, this.runs.current?.info.runId);
      if (!resolved) {
        void vscode.window.showErrorMessage(
          `Open or start a run first: "${config.name}" names no run, so it plays with the current one.`,
        );
      }
      return resolved;
    }
    return config;
  }
}

function defaultConfiguration(runId: string | undefined): vscode.DebugConfiguration {
  return {
    type: DEBUG_TYPE,
    request: 'launch',
    name: 'EMPO²: debug an episode',
    ...(runId ? { runId } : { policyPath: 'builtin' }),
    task: 'power-device',
    variation: 0,
    seed: DEFAULT_SEED,
    mode: DEFAULT_MODE,
    stopOnEntry: true,
  };
}

/** "EMPO²: Debug Episode…": on an episode (replay it), a task group (a new episode of it), or from the palette. */
export class DebugEpisodeCommand extends CommandBase<{ runs: RunsModel; trajectories: TrajectoryModel }> {
  static readonly id = 'empo2.debugEpisode';

  async execute(node?: unknown): Promise<boolean> {
    const config = await this.configuration(node as TrajectoryNode | undefined);
    if (!config || !(await vscode.debug.startDebugging(vscode.workspace.workspaceFolders?.[0], config))) {
      return false;
    }
    // VS Code opens Run and Debug by itself only on a breakpoint, not on the stop on entry: the
    // call stack, Variables and Watch are where this session is read.
    await vscode.commands.executeCommand('workbench.view.debug');
    return true;
  }

  private async configuration(node: TrajectoryNode | undefined): Promise<vscode.DebugConfiguration | undefined> {
    const base = { type: DEBUG_TYPE, request: 'launch', stopOnEntry: true };
    if (node?.kind === 'episode' || node?.kind === 'step') {
      return { ...base, name: `Replay ${node.episodeId}`, replay: { runId: node.runId, episodeId: node.episodeId } };
    }
    if (node?.kind === 'taskGroup') {
      const group = this.services.trajectories.group(node);
      if (group) {
        return {
          ...base,
          name: `${group.task}/${group.variation}`,
          runId: node.runId,
          task: group.task,
          variation: group.variation,
          seed: DEFAULT_SEED,
          mode: DEFAULT_MODE,
        };
      }
    }
    const runs = this.services.runs.list();
    if (!runs.length) {
      void vscode.window.showErrorMessage(
        'Open or start a run first: an EMPO² debug session plays an episode with one of its checkpoints.',
      );
      return undefined;
    }
    const run =
      runs.length === 1
        ? runs[0]
        : (
            await vscode.window.showQuickPick(
              runs.map((r) => ({ label: r.info.runId, entry: r })),
              { title: 'Debug an episode: which run?' },
            )
          )?.entry;
    if (!run) {
      return undefined;
    }
    const taskText = await vscode.window.showInputBox({
      title: 'Task and variation',
      value: 'power-device/0',
      prompt: 'task/variation, e.g. power-device/0',
    });
    const match = taskText ? /^\s*([^/\s]+)\s*\/\s*(\d+)\s*$/.exec(taskText) : null;
    if (!match) {
      return undefined;
    }
    const modes = [DEFAULT_MODE, ...ROLLOUT_MODES.filter((m) => m !== DEFAULT_MODE)];
    const mode = await vscode.window.showQuickPick(modes, { title: 'Rollout mode' });
    if (!mode) {
      return undefined;
    }
    return {
      ...base,
      name: `${match[1]}/${match[2]}`,
      runId: run.info.runId,
      task: match[1],
      variation: Number(match[2]),
      seed: DEFAULT_SEED,
      mode,
    };
  }
}

/** "EMPO²: Show Tokens of the Current Turn": the token view of the turn the debugger is on. */
export class ShowTokensCommand extends CommandBase<{ feature: DebugFeature }> {
  static readonly id = 'empo2.showTokens';

  async execute(): Promise<boolean> {
    const { feature } = this.services;
    const turn = feature.current?.turnInView;
    if (!turn) {
      void vscode.window.showInformationMessage(
        'Start an EMPO² debug session and play a turn first: the token view shows the turn the debugger is on.',
      );
      return false;
    }
    await feature.tokens.show(turn);
    return true;
  }
}

const COMPARE_OBSERVATIONS = 'Compare Observations';

/** A replay that left its recording: the host's sentence naming the turn, and both observations
 *  side by side on request (they are in the Debug Console too). */
async function showLeftRecording(left: LeftRecording): Promise<void> {
  const choice = await vscode.window.showWarningMessage(left.mismatch.message, COMPARE_OBSERVATIONS);
  if (choice === COMPARE_OBSERVATIONS) {
    const uri = (path: string) => vscode.Uri.from({ scheme: EPISODE_SCHEME, path });
    await vscode.commands.executeCommand(
      'vscode.diff',
      uri(left.recordedPath),
      uri(left.replayedPath),
      `Turn ${left.mismatch.turn}: recorded ↔ replayed observation`,
    );
  }
}

/** The context key of "Show Tokens of the Current Turn": a running session stands on a turn. */
export const DEBUG_TURN_CONTEXT = 'empo2.debugTurn';

/**
 * Registers the debug type; `adapters` lets tests reach every adapter made, `current` is the one
 * of a session still running. When that session stops on another turn, an open token view
 * follows it, and the `empo2.debugTurn` context key says whether there is a turn to show.
 */
export class DebugFeature extends Disposable {
  readonly documents = this._register(new EpisodeDocuments());
  readonly adapters: Empo2DebugAdapter[] = [];
  readonly tokens = this._register(new TokenView());
  /** The adapters of the sessions that have not ended, by VS Code's session id. */
  private readonly running = new Map<string, Empo2DebugAdapter>();
  private hasTurn: boolean | undefined;

  constructor(host: HostApi, runs: RunsModel) {
    super();
    this._register(vscode.workspace.registerTextDocumentContentProvider(EPISODE_SCHEME, this.documents));
    this._register(vscode.debug.registerDebugConfigurationProvider(DEBUG_TYPE, new ConfigurationProvider(runs)));
    this._register(
      vscode.debug.registerDebugAdapterDescriptorFactory(DEBUG_TYPE, {
        createDebugAdapterDescriptor: (session) => {
          const adapter = new Empo2DebugAdapter(host, this.documents);
          this.adapters.push(adapter);
          this.running.set(session.id, adapter);
          adapter.onDidStop(() => this.stopped(adapter)); // lives as long as the adapter
          adapter.onDidLeaveRecording((left) => void showLeftRecording(left));
          return new vscode.DebugAdapterInlineImplementation(adapter);
        },
      }),
    );
    this._register(
      vscode.debug.onDidTerminateDebugSession((session) => {
        this.running.delete(session.id);
        this.updateContext();
      }),
    );
    this._register(vscode.debug.onDidChangeActiveDebugSession(() => this.updateContext()));
    this.updateContext();
  }

  /** The adapter of the session in focus, else of the newest one running; never an ended one's. */
  get current(): Empo2DebugAdapter | undefined {
    const active = vscode.debug.activeDebugSession;
    return (active && this.running.get(active.id)) ?? [...this.running.values()].at(-1);
  }

  private stopped(adapter: Empo2DebugAdapter): void {
    this.updateContext();
    const turn = adapter.turnInView;
    if (turn && adapter === this.current) {
      void this.tokens.follow(turn);
    }
  }

  private updateContext(): void {
    const hasTurn = this.current?.turnInView !== undefined;
    if (hasTurn !== this.hasTurn) {
      this.hasTurn = hasTurn;
      void vscode.commands.executeCommand('setContext', DEBUG_TURN_CONTEXT, hasTurn);
    }
  }
}

export type { Empo2LaunchArguments };
