import * as vscode from 'vscode';
import { CommandBase, noTarget, performAction } from '../common/command';
import type { HostApi } from '../host/hostApi';
import { showFailure } from '../host/notices';
import { describeError } from '../rpc/errors';
import { Requests } from '../rpc/methods';
import { UPDATE_RERUN_PARAMS_DEFAULTS, type RerunResult, type Tip, type UpdateRerunParams } from '../rpc/protocol';
import type { RunsModel } from '../runs/runsModel';
import type { ComparisonPanel } from './comparisonPanel';
import { RerunJobs } from './rerunJobs';
import { rerunArgs } from './rerunArgs';
import { clearTheWayForRerun } from './rerunGateDialog';
import {
  checkpointDescription,
  checkpointPlaceholder,
  checkpointTime,
  editedSince,
  proposedCheckpoint,
  stepTitle,
  variationsWording,
} from './rerunSteps';
import { branchPickItem, branchRuns, isBranch } from './branches';

// "EMPO²: Rerun Off-Policy Update…" and the branch commands. The rerun asks, in quick picks, for
// the checkpoint, the variations, N, K and dry run or not (rerunSteps.ts), once nothing is in the way (a training
// run is paused or stopped first, if the person agrees: rerunGate.ts); the host does the rest (update.rerun)
// and reports progress, which a cancellable notification shows. Cancel stops the rerun between
// iterations and leaves a branch that "Rerun" on it continues.

interface Pick<T> extends vscode.QuickPickItem {
  readonly value: T;
}

/** What the rerun and branch commands work with (activate() builds it once). */
export interface RerunServices {
  readonly host: HostApi;
  readonly runs: RunsModel;
  readonly jobs: RerunJobs;
  readonly panel: ComparisonPanel;
}

export class RerunUpdateCommand extends CommandBase<RerunServices> {
  static readonly id = 'empo2.rerunUpdate';

  /**
   * From the palette (no argument), the tips view (a tip or tips: their variations), the
   * trajectory tree (a variation or run node), or a script/test (update.rerun's params in full,
   * which skip every pick).
   */
  execute(arg?: unknown, more?: unknown): Promise<RerunResult | undefined> {
    const { jobs, panel } = this.services;
    return performAction({
      target: () => this.request(arg, more),
      request: (request) => jobs.run(request),
      report: (record) => record && panel.show(record),
      failed: (error, request) => showFailure(request.dryRun ? 'The dry run' : 'The rerun', error),
    });
  }

  /** The full request: the argument's, the rest picked; undefined when something is missing. */
  private async request(arg: unknown, more: unknown): Promise<UpdateRerunParams | undefined> {
    if (!this.services.host.current) {
      void vscode.window.showInformationMessage(
        'EMPO²: rerunning the off-policy update needs the training host; run "EMPO²: Start Host" first.',
      );
      return undefined;
    }
    const given = rerunArgs(arg, more);
    const runId = given.runId ?? this.services.runs.current?.info.runId;
    if (!runId) {
      void vscode.window.showInformationMessage(
        'EMPO²: rerunning an update needs a run; open a run folder or select a run in the Trajectories view first.',
      );
      return undefined;
    }
    if (given.complete) {
      return { ...given.request, runId }; // a script's request: the host's answer says what is in the way
    }
    const { host, runs, jobs } = this.services;
    return (await clearTheWayForRerun(host, runs, jobs)) ? this.pick(runId, given.request) : undefined;
  }

  private async pick(runId: string, preset: Partial<UpdateRerunParams>): Promise<UpdateRerunParams | undefined> {
    const { checkpoints } = await this.services.host.request(Requests.checkpointList, { runId });
    if (!checkpoints.length) {
      void vscode.window.showWarningMessage(`EMPO²: run ${runId} has no checkpoint to rerun from.`);
      return undefined;
    }
    // The tips and the checkpoints' times, once: which checkpoints a person's edits came after.
    const { host } = this.services;
    const oldest = Math.min(...checkpoints.map((c) => c.iteration));
    const [{ items }, { records }] = await Promise.all([
      host.request(Requests.memoryList, { runId, filter: { includeDeleted: true }, limit: 500 }),
      host.request(Requests.runMetrics, { runId, sinceIteration: Math.max(0, oldest - 1) }),
    ]);
    const editedAfter = (iteration: number) => {
      const since = checkpointTime(iteration, records);
      return since === undefined ? undefined : editedSince(items, since);
    };
    const proposed = proposedCheckpoint(
      checkpoints.map((c) => c.iteration),
      editedAfter,
    );
    const checkpoint = await pickOne(
      [...checkpoints].reverse().map((c): Pick<number> => ({
        label: `iteration ${c.iteration}`,
        description: checkpointDescription(c.latest, editedAfter(c.iteration)),
        value: c.iteration,
      })),
      (item) => item.value === proposed,
      { title: stepTitle('checkpoint', ` of ${runId}`), placeholder: checkpointPlaceholder(checkpoints) },
    );
    if (!checkpoint) {
      return undefined;
    }
    const variations = await this.pickVariations(
      checkpoint.value,
      preset.variations,
      items,
      editedAfter(checkpoint.value),
    );
    if (!variations) {
      return undefined;
    }
    const episodes = await askNumber(
      stepTitle('N, rollouts per variation'),
      preset.episodes ?? UPDATE_RERUN_PARAMS_DEFAULTS.episodes,
      1,
      256,
    );
    if (episodes === undefined) {
      return undefined;
    }
    const iterations = await askNumber(
      stepTitle('K, update iterations'),
      preset.iterations ?? UPDATE_RERUN_PARAMS_DEFAULTS.iterations,
      1,
      1000,
    );
    if (iterations === undefined) {
      return undefined;
    }
    const mode = await vscode.window.showQuickPick(
      [
        {
          label: '$(beaker) Dry run',
          description: 'the loss, ratios and masked tokens; no weight changes, no branch',
          value: true,
        },
        {
          label: '$(git-branch) Rerun on a new branch',
          description: `the parent ${runId} is never modified`,
          value: false,
        },
      ] satisfies Pick<boolean>[],
      { title: stepTitle('dry run or rerun'), placeHolder: 'Dry run first, or rerun for real?' },
    );
    if (!mode) {
      return undefined;
    }
    return { runId, checkpoint: checkpoint.value, variations, episodes, iterations, dryRun: mode.value };
  }

  /** Variations to rerun: those given, else chosen among the run's, the ones whose tips a person
   *  edited after the chosen checkpoint ticked (empty: the host takes those). */
  private async pickVariations(
    checkpoint: number,
    given: readonly string[] | undefined,
    items: readonly Tip[],
    edited: ReadonlySet<string> | undefined,
  ): Promise<string[] | undefined> {
    const keys = [...new Set(items.map((t) => t.variationKey))].sort();
    const { placeholder, note } = variationsWording(checkpoint, edited);
    const picks = await vscode.window.showQuickPick(
      keys.map((key): Pick<string> => ({
        label: key,
        description: edited?.has(key) ? note : undefined,
        picked: given ? given.includes(key) : (edited?.has(key) ?? false),
        value: key,
      })),
      { title: stepTitle('variations'), placeHolder: placeholder, canPickMany: true },
    );
    return picks ? picks.map((p) => p.value) : undefined;
  }
}

/** One item picked, the proposed one highlighted (Enter takes it); undefined when cancelled. */
function pickOne<T extends vscode.QuickPickItem>(
  items: readonly T[],
  proposed: (item: T) => boolean,
  options: { title: string; placeholder: string },
): Promise<T | undefined> {
  const pick = vscode.window.createQuickPick<T>();
  pick.title = options.title;
  pick.placeholder = options.placeholder;
  pick.items = items;
  pick.activeItems = items.filter(proposed).slice(0, 1);
  return new Promise<T | undefined>((resolve) => {
    let chosen: T | undefined;
    pick.onDidAccept(() => {
      chosen = pick.selectedItems[0] ?? pick.activeItems[0];
      pick.hide();
    });
    pick.onDidHide(() => {
      pick.dispose();
      resolve(chosen);
    });
    pick.show();
  });
}

async function askNumber(title: string, value: number, min: number, max: number): Promise<number | undefined> {
  const text = await vscode.window.showInputBox({
    title,
    value: String(value),
    validateInput: (v) =>
      /^\d+$/.test(v.trim()) && +v >= min && +v <= max ? undefined : `A whole number from ${min} to ${max}`,
  });
  return text === undefined ? undefined : Number(text.trim());
}

/** A branch run id from a tree node (`{ runId }`) or a string; else the current run when it is
 *  a branch; else (the palette) one picked among the branches, or a sentence that there is none. */
async function branchOf(arg: unknown, runs: RunsModel, title: string): Promise<string | undefined> {
  if (typeof arg === 'string') {
    return arg;
  }
  if (typeof arg === 'object' && arg !== null && typeof (arg as { runId?: unknown }).runId === 'string') {
    return (arg as { runId: string }).runId;
  }
  if (runs.current && isBranch(runs.current)) {
    return runs.current.info.runId;
  }
  const branches = branchRuns(runs.list());
  if (!branches.length) {
    return noTarget('EMPO²: there is no branch run; "EMPO²: Rerun Off-Policy Update…" makes one.');
  }
  return (
    await vscode.window.showQuickPick(branches.map(branchPickItem), {
      title: `EMPO²: ${title}`,
      placeHolder: 'Which branch run?',
    })
  )?.runId;
}

export class CompareWithParentCommand extends CommandBase<RerunServices> {
  static readonly id = 'empo2.compareWithParent';

  execute(arg?: unknown): Promise<RerunResult | undefined> {
    const { host, runs, panel } = this.services;
    return performAction({
      target: () => branchOf(arg, runs, 'Compare with Parent'),
      request: async (runId) => (await host.request(Requests.updateCompare, { runId })).result,
      report: (record) => panel.show(record),
      failed: (error) => showFailure('Comparing with the parent', error),
    });
  }
}

export class AdoptBranchCommand extends CommandBase<RerunServices> {
  static readonly id = 'empo2.adoptBranch';

  async execute(arg?: unknown): Promise<boolean> {
    const { host, runs } = this.services;
    const adopted = await performAction({
      target: () => branchOf(arg, runs, 'Adopt Branch'),
      request: async (runId) => (await host.request(Requests.branchAdopt, { runId })).run,
      report: (run, runId) => {
        runs.absorbInfo(run);
        void vscode.window.showInformationMessage(
          `EMPO²: ${runId} is now a run of its own; "Resume Run" trains it on from iteration ${run.iteration}.`,
        );
      },
      failed: (error) => showFailure('Adopting the branch', error),
    });
    return adopted !== undefined;
  }
}

export class DeleteBranchCommand extends CommandBase<RerunServices> {
  static readonly id = 'empo2.deleteBranch';

  /** `{ runId, confirmed: true }` (tests) skips the question. */
  async execute(arg?: unknown): Promise<boolean> {
    const { host, runs } = this.services;
    const confirmed = typeof arg === 'object' && arg !== null && (arg as { confirmed?: unknown }).confirmed === true;
    const deleted = await performAction({
      target: () => branchOf(arg, runs, 'Delete Branch'),
      confirm: async (runId) => confirmed || (await confirmBranchDeletion(runId)),
      request: async (runId) => {
        await host.request(Requests.branchDelete, { runId });
        await runs.reload();
        return true;
      },
      failed: (error, runId) =>
        void vscode.window.showErrorMessage(`EMPO²: deleting ${runId} failed: ${describeError(error)}`),
    });
    return deleted === true;
  }
}

async function confirmBranchDeletion(runId: string): Promise<boolean> {
  const answer = await vscode.window.showWarningMessage(
    `Delete branch ${runId}? Its folder (weights, memory, trajectories, comparison) is removed; its parent is not touched.`,
    { modal: true },
    'Delete Branch',
  );
  return answer === 'Delete Branch';
}
