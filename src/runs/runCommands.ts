import * as vscode from 'vscode';
import type { Command } from '../common/command';
import type { HostManager } from '../host/hostManager';
import { ensureHost, showFailure, showHostRequired } from '../host/notices';
import type { WorkspaceTrustGuard } from '../host/workspaceTrust';
import { describeError, isRpcError } from '../rpc/errors';
import { Requests } from '../rpc/methods';
import { ErrorCodes, type RunInfo, type RunResult, type RunStartParams } from '../rpc/protocol';
import type { MetricsPanel } from './metricsPanel';
import { isActive, type RunEntry, type RunsModel } from './runsModel';
import { resumeQuestion } from './runText';

// Commands on training runs, through the host's run.* requests. They act on the live run, else
// on the current one (selected in the Trajectories tree, or opened last).

interface RunPick extends vscode.QuickPickItem {
  readonly start?: Pick<RunStartParams, 'preset'> & { readonly configFile?: vscode.Uri; readonly browse?: boolean };
}

/**
 * The command's argument (scripts, tests, empo2.autoStartRun): the start request's own fields. A
 * config file is read here and sent as `config`, so a remote host needs no access to it.
 */
export type NewRunArg = Pick<RunStartParams, 'preset' | 'config' | 'configFile' | 'pauseAfterIteration'>;

const CONFIG_GLOB = '{.empo2/configs/*.json,**/empo2*.json,**/*.empo2.json}';

export class NewRunCommand implements Command {
  static readonly id = 'empo2.newRun';
  readonly id = NewRunCommand.id;

  constructor(
    private readonly trust: WorkspaceTrustGuard,
    private readonly host: HostManager,
    private readonly runs: RunsModel,
  ) {}

  /** Argument (scripts, tests): `{ preset }`, `{ config }` or `{ configFile }` skips the pick. */
  async execute(arg?: unknown): Promise<RunInfo | undefined> {
    // A run starts a host when none is running, so it needs trust like Start Host does.
    if (!(await ensureHost(this.host, this.trust, 'Starting a training run'))) {
      return undefined;
    }
    const params = isStartArg(arg) ? await this.paramsFrom(arg) : await this.pick();
    if (!params) {
      return undefined;
    }
    try {
      const { run } = await this.host.request(Requests.runStart, params);
      const entry = this.runs.absorbInfo(run);
      this.runs.select(entry.info.runId);
      void vscode.commands.executeCommand('empo2.trajectories.focus');
      return run;
    } catch (error) {
      if (isRpcError(error, ErrorCodes.RunBusy)) {
        await vscode.window.showWarningMessage(`EMPO²: ${describeError(error)}`);
      } else {
        await showFailure('Starting the run', error);
      }
      return undefined;
    }
  }

  private async pick(): Promise<RunStartParams | undefined> {
    const presets = this.host.current?.init.capabilities.presets ?? [];
    const files = await vscode.workspace.findFiles(CONFIG_GLOB, '**/{node_modules,.venv,out}/**', 50);
    const items: RunPick[] = [
      { label: 'Presets', kind: vscode.QuickPickItemKind.Separator },
      ...presets.map((preset) => ({
        label: preset,
        description: preset === 'builtin' ? 'the built-in default: small text worlds, a small policy, trains on a CPU' : undefined,
        start: { preset },
      })),
      { label: 'Config files', kind: vscode.QuickPickItemKind.Separator },
      ...files.map((uri) => ({ label: vscode.workspace.asRelativePath(uri), description: 'config file', start: { configFile: uri } })),
      { label: '$(folder-opened) Choose a config file…', start: { browse: true } },
    ];
    const picked = await vscode.window.showQuickPick(items, {
      title: 'EMPO²: New Training Run',
      placeHolder: 'A preset, or a JSON config file (the fields of a run\'s config.json)',
      ignoreFocusOut: true,
    });
    if (!picked?.start) {
      return undefined;
    }
    if (picked.start.preset) {
      return { preset: picked.start.preset };
    }
    let file = picked.start.configFile;
    if (picked.start.browse) {
      file = (
        await vscode.window.showOpenDialog({ title: 'EMPO²: config file', canSelectMany: false, filters: { 'JSON config': ['json'] }, openLabel: 'Train' })
      )?.[0];
    }
    return file ? this.paramsFrom({ configFile: file.fsPath }) : undefined;
  }

  /** A config file is read here and sent as an object, so a remote host needs no access to it. */
  private async paramsFrom(arg: NewRunArg): Promise<RunStartParams | undefined> {
    const pause = typeof arg.pauseAfterIteration === 'number' ? { pauseAfterIteration: arg.pauseAfterIteration } : {};
    if (arg.preset) {
      return { preset: arg.preset, ...pause };
    }
    if (arg.config) {
      return { config: arg.config, ...pause };
    }
    try {
      const text = new TextDecoder().decode(await vscode.workspace.fs.readFile(vscode.Uri.file(arg.configFile!)));
      const config = JSON.parse(text) as unknown;
      if (typeof config !== 'object' || config === null || Array.isArray(config)) {
        throw new Error('it does not hold a JSON object');
      }
      return { config: config as Record<string, unknown>, ...pause };
    } catch (error) {
      await vscode.window.showErrorMessage(`EMPO²: cannot read the config file ${arg.configFile}: ${describeError(error)}`);
      return undefined;
    }
  }
}

function isStartArg(arg: unknown): arg is NewRunArg {
  return typeof arg === 'object' && arg !== null && ('preset' in arg || 'config' in arg || 'configFile' in arg);
}

/** The run a pause/resume/stop acts on: an explicit id, else the live run, else the current one. */
function targetRun(runs: RunsModel, arg: unknown): string | undefined {
  if (typeof arg === 'string') {
    return arg;
  }
  if (typeof arg === 'object' && arg !== null && 'runId' in arg && typeof (arg as { runId: unknown }).runId === 'string') {
    return (arg as { runId: string }).runId;
  }
  return runs.live?.info.runId ?? runs.current?.info.runId;
}

/** What Pause and Stop say and send; both act on the training run. */
interface LiveRunAction {
  /** 'Pausing a run', for the message when no host runs. */
  readonly doing: string;
  /** 'Pausing the run', for the message when the host refuses. */
  readonly failing: string;
  readonly verb: string;
  /** Whether the live run can take the action (a pausing run cannot be paused again). */
  readonly applies: (live: RunEntry) => boolean;
  readonly send: (runId: string) => Promise<RunResult>;
  readonly done: string;
}

/** Pause and Stop: needs a host and a training run; the request, then a status-bar line. */
async function actOnLiveRun(host: HostManager, runs: RunsModel, arg: unknown, action: LiveRunAction): Promise<void> {
  if (!host.current) {
    return showHostRequired(action.doing, host);
  }
  const live = runs.live;
  if (!live || !action.applies(live)) {
    void vscode.window.showInformationMessage(`EMPO²: no run is training, so there is nothing to ${action.verb}.`);
    return;
  }
  try {
    const { run } = await action.send(targetRun(runs, arg) ?? live.info.runId);
    runs.absorbInfo(run);
    void vscode.window.setStatusBarMessage(`EMPO²: ${run.runId} ${action.done}`, 5_000);
  } catch (error) {
    await showFailure(action.failing, error);
  }
}

export class PauseRunCommand implements Command {
  static readonly id = 'empo2.pauseRun';
  readonly id = PauseRunCommand.id;

  constructor(
    private readonly host: HostManager,
    private readonly runs: RunsModel,
  ) {}

  execute(arg?: unknown): Promise<void> {
    return actOnLiveRun(this.host, this.runs, arg, {
      doing: 'Pausing a run',
      failing: 'Pausing the run',
      verb: 'pause',
      applies: (live) => isActive(live.info),
      send: (runId) => this.host.request(Requests.runPause, { runId }),
      done: 'pauses after its current iteration',
    });
  }
}

export class ResumeRunCommand implements Command {
  static readonly id = 'empo2.resumeRun';
  readonly id = ResumeRunCommand.id;

  constructor(
    private readonly trust: WorkspaceTrustGuard,
    private readonly host: HostManager,
    private readonly runs: RunsModel,
  ) {}

  async execute(arg?: unknown): Promise<void> {
    if (!(await ensureHost(this.host, this.trust, 'Resuming a run'))) {
      return;
    }
    const runId = targetRun(this.runs, arg);
    if (!runId) {
      void vscode.window.showInformationMessage('EMPO²: no run to resume; open a run folder first.');
      return;
    }
    const entry = this.runs.get(runId);
    if (entry && !entry.info.live) {
      const ok = await vscode.window.showInformationMessage(
        resumeQuestion(runId, entry.info.iteration),
        { modal: true },
        'Resume',
      );
      if (ok !== 'Resume') {
        return;
      }
    }
    try {
      const { run } = await this.host.request(Requests.runResume, { runId });
      this.runs.absorbInfo(run);
      this.runs.select(run.runId);
    } catch (error) {
      await showFailure('Resuming the run', error);
    }
  }
}

export class StopRunCommand implements Command {
  static readonly id = 'empo2.stopRun';
  readonly id = StopRunCommand.id;

  constructor(
    private readonly host: HostManager,
    private readonly runs: RunsModel,
  ) {}

  execute(arg?: unknown): Promise<void> {
    return actOnLiveRun(this.host, this.runs, arg, {
      doing: 'Stopping a run',
      failing: 'Stopping the run',
      verb: 'stop',
      applies: () => true,
      send: (runId) => this.host.request(Requests.runStop, { runId }),
      done: 'stops at its next iteration boundary',
    });
  }
}

export class ShowMetricsCommand implements Command {
  static readonly id = 'empo2.showMetrics';
  readonly id = ShowMetricsCommand.id;

  constructor(
    private readonly host: HostManager,
    private readonly runs: RunsModel,
    private readonly metrics: MetricsPanel,
  ) {}

  /** Argument: a run id, or the Uri of a run folder (read from disk, no host needed). */
  async execute(arg?: unknown): Promise<void> {
    try {
      if (arg instanceof vscode.Uri) {
        await this.metrics.showFolder(arg);
        return;
      }
      const runId = targetRun(this.runs, arg);
      if (this.host.current && runId) {
        await this.metrics.showRun(runId);
        return;
      }
      // No host (or no run): a finished run's metrics.jsonl can be read straight from its folder.
      const folder = (
        await vscode.window.showOpenDialog({
          title: 'EMPO²: metrics of a run folder (no host needed)',
          canSelectFiles: false,
          canSelectFolders: true,
          openLabel: 'Show Metrics',
        })
      )?.[0];
      if (folder) {
        await this.metrics.showFolder(folder);
      }
    } catch (error) {
      await showFailure('Showing the metrics', error);
    }
  }
}
