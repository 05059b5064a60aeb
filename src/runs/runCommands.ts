import * as vscode from 'vscode';
import { CommandBase, noTarget, performAction } from '../common/command';
import type { Settings } from '../common/settings';
import type { HostLog } from '../host/hostLog';
import type { HostManager } from '../host/hostManager';
import { ensureHost, showFailure, showHostRequired } from '../host/notices';
import type { WorkspaceTrustGuard } from '../host/workspaceTrust';
import { describeError, isRpcError } from '../rpc/errors';
import { Requests } from '../rpc/methods';
import { ErrorCodes, type RunInfo, type RunStartParams } from '../rpc/protocol';
import { stopAndWait } from './liveRunWait';
import type { MetricsPanel } from './metricsPanel';
import { newRunObstacle, STOP_AND_START } from './newRunObstacle';
import { showPendingNotice } from './pendingNotice';
import { askNewRun, type NewRunSetup } from './newRunFlow';
import { readRunConfigurations, saveRunConfiguration } from './runConfigurationFile';
import {
  describeChoice,
  RUN_CONFIGURATIONS_FILE,
  startParams,
  type RunChoice,
  type RunConfiguration,
} from './runConfigurations';
import { isActive, type RunEntry, type RunsModel } from './runsModel';
import { resumeQuestion } from './runText';

// Commands on training runs, through the host's run.* requests. They act on the live run, else
// on the current one (selected in the Trajectories tree, or opened last).

/**
 * New Training Run's argument (scripts, tests, empo2.autoStartRun): the start request's own
 * fields. A config file is read here and sent as `config`, so a remote host needs no access to it.
 */
export type NewRunArg = Pick<RunStartParams, 'preset' | 'config' | 'configFile' | 'pauseAfterIteration'>;

/** What the run commands work with (activate() builds it once). */
export interface RunServices {
  readonly settings: Settings;
  readonly hostLog: HostLog;
  readonly trust: WorkspaceTrustGuard;
  readonly host: HostManager;
  readonly runs: RunsModel;
  readonly metrics: MetricsPanel;
}

/** What a new run starts with: run.start's params, and the choice that made them (to save it). */
interface RunStart {
  readonly params: RunStartParams;
  readonly choice?: RunChoice;
}

const SAVE_CONFIGURATION = 'Save as Run Configuration…';

export class NewRunCommand extends CommandBase<RunServices> {
  static readonly id = 'empo2.newRun';

  /** Argument (scripts, tests): `{ preset }`, `{ config }` or `{ configFile }` skips the questions. */
  execute(arg?: unknown): Promise<RunInfo | undefined> {
    return startRun(this.services, async () => {
      if (isStartArg(arg)) {
        const params = await this.paramsFrom(arg);
        return params && { params };
      }
      if (!(await clearTheWay(this.services))) {
        return undefined;
      }
      const setup = await askNewRun(this.services.host);
      return setup && this.startOf(setup);
    });
  }

  private async startOf(setup: NewRunSetup): Promise<RunStart | undefined> {
    if (setup.kind === 'choice') {
      return { params: startParams(setup.choice), choice: setup.choice };
    }
    if (setup.kind === 'saved') {
      return checkedConfiguration(this.services.host, setup.configuration);
    }
    const params = await this.paramsFrom({ configFile: setup.file });
    return params && { params };
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
      await vscode.window.showErrorMessage(
        `EMPO²: cannot read the config file ${arg.configFile}: ${describeError(error)}`,
      );
      return undefined;
    }
  }
}

/**
 * Starts one of the run configurations saved in the workspace (.vscode/empo2-runs.json), after
 * the host has checked it. Argument (scripts, keybindings): a configuration's name.
 */
export class StartSavedRunCommand extends CommandBase<RunServices> {
  static readonly id = 'empo2.startSavedRun';

  execute(arg?: unknown): Promise<RunInfo | undefined> {
    return startRun(this.services, async () => {
      const saved = await readRunConfigurations();
      if ('problem' in saved) {
        void vscode.window.showErrorMessage(`EMPO²: ${saved.problem}`);
        return undefined;
      }
      if (saved.configurations.length === 0) {
        return noTarget(
          `EMPO²: no run configurations are saved in ${RUN_CONFIGURATIONS_FILE} yet; New Training Run offers "${SAVE_CONFIGURATION}" once a run starts.`,
        );
      }
      const configuration =
        typeof arg === 'string'
          ? saved.configurations.find((c) => c.name === arg)
          : await pickConfiguration(saved.configurations);
      if (!configuration) {
        return typeof arg === 'string'
          ? noTarget(`EMPO²: ${RUN_CONFIGURATIONS_FILE} has no run configuration named "${arg}".`)
          : undefined;
      }
      return (await clearTheWay(this.services)) ? checkedConfiguration(this.services.host, configuration) : undefined;
    });
  }
}

/** New Training Run and Start Saved Run Configuration: a host, what to start, run.start, the run shown. */
function startRun(services: RunServices, what: () => Promise<RunStart | undefined>): Promise<RunInfo | undefined> {
  const { trust, host, runs } = services;
  return performAction({
    // A run starts a host when none is running, so it needs trust like Start Host does.
    target: async () => {
      if (!(await ensureHost(host, trust, 'Starting a training run'))) {
        return undefined;
      }
      try {
        return await what();
      } catch (error) {
        await showFailure('Setting up the run', error);
        return undefined;
      }
    },
    request: async (start) => (await host.request(Requests.runStart, start.params)).run,
    report: (run, start) => {
      runs.select(runs.absorbInfo(run).info.runId);
      void vscode.commands.executeCommand('empo2.trajectories.focus');
      if (start.choice) {
        void offerToSave(run.runId, start.choice);
      }
    },
    failed: async (error) => {
      if (isRpcError(error, ErrorCodes.RunBusy)) {
        await vscode.window.showWarningMessage(`EMPO²: ${describeError(error)}`);
      } else {
        await showFailure('Starting the run', error);
      }
    },
  });
}

/** Before the first question: a live run (paused ones too) is stopped when the person agrees. */
async function clearTheWay({ host, runs }: RunServices): Promise<boolean> {
  const live = runs.live;
  const obstacle = newRunObstacle(live);
  if (!live || !obstacle) {
    return true;
  }
  if (!obstacle.canStop) {
    void vscode.window.showInformationMessage(`EMPO²: ${obstacle.message} ${obstacle.detail}`);
    return false;
  }
  const choice = await vscode.window.showWarningMessage(
    obstacle.message,
    { modal: true, detail: obstacle.detail },
    STOP_AND_START,
  );
  return choice === STOP_AND_START && stopAndWait(host, runs, live.info.runId);
}

/** A saved configuration's params once the host has checked them; its refusal in one sentence. */
async function checkedConfiguration(host: HostManager, configuration: RunConfiguration): Promise<RunStart | undefined> {
  const params = startParams(configuration);
  try {
    await host.request(Requests.configCheck, params);
  } catch (error) {
    if (!isRpcError(error, ErrorCodes.ConfigInvalid)) {
      throw error;
    }
    void vscode.window.showErrorMessage(
      `EMPO²: the run configuration "${configuration.name}" (${RUN_CONFIGURATIONS_FILE}) cannot start: ${describeError(error)}`,
    );
    return undefined;
  }
  return { params, choice: undefined };
}

async function pickConfiguration(configurations: readonly RunConfiguration[]): Promise<RunConfiguration | undefined> {
  const picked = await vscode.window.showQuickPick(
    configurations.map((configuration) => ({
      label: configuration.name,
      detail: describeChoice(configuration),
      configuration,
    })),
    {
      title: 'EMPO²: Start Saved Run Configuration',
      placeHolder: `A run configuration of ${RUN_CONFIGURATIONS_FILE}`,
      matchOnDetail: true,
    },
  );
  return picked?.configuration;
}

/** Once a run set up by the questions has started: keep its choice under a name, if wanted. */
async function offerToSave(runId: string, choice: RunChoice): Promise<void> {
  if (
    (await vscode.window.showInformationMessage(
      `EMPO²: ${runId} started: ${describeChoice(choice)}.`,
      SAVE_CONFIGURATION,
    )) !== SAVE_CONFIGURATION
  ) {
    return;
  }
  const saved = await readRunConfigurations();
  const names = 'problem' in saved ? [] : saved.configurations.map((c) => c.name);
  const name = await vscode.window.showInputBox({
    title: `EMPO²: ${SAVE_CONFIGURATION}`,
    prompt: `A name for this run configuration, saved in ${RUN_CONFIGURATIONS_FILE}`,
    value: `${choice.env} ${choice.preset}`,
    ignoreFocusOut: true,
    validateInput: (value) =>
      !value.trim()
        ? 'A run configuration needs a name.'
        : names.includes(value.trim())
          ? {
              message: `Replaces the saved run configuration "${value.trim()}".`,
              severity: vscode.InputBoxValidationSeverity.Warning,
            }
          : undefined,
  });
  if (!name?.trim()) {
    return;
  }
  const problem = await saveRunConfiguration({ name: name.trim(), ...choice });
  if (problem) {
    void vscode.window.showErrorMessage(`EMPO²: the run configuration was not saved: ${problem}`);
  } else {
    vscode.window.setStatusBarMessage(
      `EMPO²: saved the run configuration "${name.trim()}" in ${RUN_CONFIGURATIONS_FILE}`,
      5_000,
    );
  }
}

function isStartArg(arg: unknown): arg is NewRunArg {
  return typeof arg === 'object' && arg !== null && ('preset' in arg || 'config' in arg || 'configFile' in arg);
}

/** The run a command's argument names: a run id, or a tree row's run. */
export function namedRun(arg: unknown): string | undefined {
  if (typeof arg === 'string') {
    return arg;
  }
  if (
    typeof arg === 'object' &&
    arg !== null &&
    'runId' in arg &&
    typeof (arg as { runId: unknown }).runId === 'string'
  ) {
    return (arg as { runId: string }).runId;
  }
  return undefined;
}

/** The run a pause/resume/stop acts on: an explicit id, else the live run, else the current one. */
function targetRun(runs: RunsModel, arg: unknown): string | undefined {
  return namedRun(arg) ?? runs.live?.info.runId ?? runs.current?.info.runId;
}

/** Resumes a run and makes it the current one (Resume Run, and the run guard after a restart). */
export async function resumeRun(host: HostManager, runs: RunsModel, runId: string): Promise<RunInfo> {
  const { run } = await host.request(Requests.runResume, { runId });
  runs.absorbInfo(run);
  runs.select(run.runId);
  return run;
}

/**
 * Pause and Stop: each needs a host and a training run, sends its request, and says what happens
 * next in the status bar. `doing` names it when no host runs, and in the failure sentence.
 */
interface LiveRunAction {
  readonly verb: string;
  readonly doing: string;
  /** Whether the live run can take the action (a pausing run cannot be paused again). */
  readonly applies: (live: RunEntry) => boolean;
  readonly method: typeof Requests.runPause | typeof Requests.runStop;
  readonly done: string;
}

const PAUSE: LiveRunAction = {
  verb: 'pause',
  doing: 'Pausing',
  applies: (live) => isActive(live.info),
  method: Requests.runPause,
  done: 'pauses after its current iteration',
};
const STOP: LiveRunAction = {
  verb: 'stop',
  doing: 'Stopping',
  applies: () => true,
  method: Requests.runStop,
  done: 'stops at its next iteration boundary',
};

abstract class LiveRunCommand extends CommandBase<RunServices> {
  protected abstract readonly action: LiveRunAction;

  async execute(arg?: unknown): Promise<void> {
    const { host, runs } = this.services;
    const { verb, doing, applies, method, done } = this.action;
    if (!host.current) {
      return showHostRequired(`${doing} a run`, host);
    }
    await performAction({
      target: () =>
        runs.live && applies(runs.live)
          ? (targetRun(runs, arg) ?? runs.live.info.runId)
          : noTarget(`EMPO²: no run is training, so there is nothing to ${verb}.`),
      request: async (runId) => (await host.request(method, { runId })).run,
      report: (run) => {
        runs.absorbInfo(run);
        showPendingNotice(
          { onDidChangeRun: runs.onDidChangeRun, show: (text, ms) => vscode.window.setStatusBarMessage(text, ms) },
          run.runId,
          run.state,
          `EMPO²: ${run.runId} ${done}`,
        );
      },
      failed: (error) => showFailure(`${doing} the run`, error),
    });
  }
}

export class PauseRunCommand extends LiveRunCommand {
  static readonly id = 'empo2.pauseRun';
  protected readonly action = PAUSE;
}

export class StopRunCommand extends LiveRunCommand {
  static readonly id = 'empo2.stopRun';
  protected readonly action = STOP;
}

export class ResumeRunCommand extends CommandBase<RunServices> {
  static readonly id = 'empo2.resumeRun';

  async execute(arg?: unknown): Promise<void> {
    const { trust, host, runs } = this.services;
    if (!(await ensureHost(host, trust, 'Resuming a run'))) {
      return;
    }
    await performAction({
      target: () => targetRun(runs, arg) ?? noTarget('EMPO²: no run to resume; open a run folder first.'),
      confirm: (runId) => this.confirm(runId),
      request: (runId) => resumeRun(host, runs, runId),
      failed: (error) => showFailure('Resuming the run', error),
    });
  }

  /** A run that is not live resumes from its last checkpoint: asked first. */
  private async confirm(runId: string): Promise<boolean> {
    const entry = this.services.runs.get(runId);
    if (!entry || entry.info.live) {
      return true;
    }
    return (
      (await vscode.window.showInformationMessage(
        resumeQuestion(runId, entry.info.iteration),
        { modal: true },
        'Resume',
      )) === 'Resume'
    );
  }
}
