import * as vscode from 'vscode';
import { CommandBase, performAction } from '../common/command';
import type { HostManager } from '../host/hostManager';
import { showFailure, showHostRequired } from '../host/notices';
import type { Tip } from '../rpc/protocol';
import type { RunsModel } from '../runs/runsModel';
import { deleteTipQuestion, type TipEdit } from './tipRules';
import type { TipHistoryDocuments } from './tipHistoryDocuments';
import { newEditId, type TipsModel } from './tipsModel';
import { authorName, tipPickDescription, versionLine } from './tipWords';
import { configuredVariations } from './variations';

// Commands on the current run's memory tips, from the palette (the Memory Tips view does the
// same inline). Edits carry the version the person read; on a conflict both texts are shown and
// the person chooses.

const KEEP_MINE = 'Keep Mine';
const KEEP_CURRENT = 'Keep Current';
const DELETE = 'Delete';

interface TipPick extends vscode.QuickPickItem {
  readonly tip: Tip;
}

/** A tip id from a command argument (`'t000001'` or `{ tipId }`), if one was given. */
function tipIdOf(arg: unknown): string | undefined {
  if (typeof arg === 'string') {
    return arg;
  }
  if (typeof arg === 'object' && arg !== null && typeof (arg as { tipId?: unknown }).tipId === 'string') {
    return (arg as { tipId: string }).tipId;
  }
  return undefined;
}

/** Asks before a tip is deleted (a modal dialog); true when the person confirmed. */
export async function confirmTipDeletion(tipId: string, tip: Tip | undefined): Promise<boolean> {
  return (await vscode.window.showWarningMessage(deleteTipQuestion(tipId, tip), { modal: true }, DELETE)) === DELETE;
}

/** What the tip commands work with (activate() builds it once). */
export interface TipServices {
  readonly host: HostManager;
  readonly tips: TipsModel;
  readonly runs: RunsModel;
  readonly histories: TipHistoryDocuments;
}

/** The run whose tips the commands edit; explains what is missing when there is none. */
async function tipsReady({ host, tips }: TipServices, what: string): Promise<boolean> {
  if (!host.current) {
    await showHostRequired(what, host);
    return false;
  }
  if (!tips.currentRunId) {
    void vscode.window.showInformationMessage(
      `EMPO²: ${what} needs an open run; start a training run or open a run folder first.`,
    );
    return false;
  }
  await tips.whenLoaded();
  return true;
}

/** The tip a command acts on (the argument's, else picked), once the run's tips are loaded. */
/** `includeDeleted`: a deleted tip may be chosen too (its history is readable; it cannot be edited). */
async function readyTip(
  services: TipServices,
  what: string,
  arg: unknown,
  title: string,
  includeDeleted = false,
): Promise<Tip | undefined> {
  return (await tipsReady(services, what)) ? pickTip(services.tips, arg, title, includeDeleted) : undefined;
}

async function pickTip(
  tips: TipsModel,
  arg: unknown,
  title: string,
  includeDeleted: boolean,
): Promise<Tip | undefined> {
  const given = tipIdOf(arg);
  if (given) {
    const tip = includeDeleted ? tips.find(given) : tips.get(given);
    if (!tip) {
      void vscode.window.showWarningMessage(
        tips.find(given)
          ? `EMPO²: tip ${given} is deleted; Show Tip History still reads it.`
          : `EMPO²: no tip ${given} in run ${tips.currentRunId}.`,
      );
    }
    return tip;
  }
  const items: TipPick[] = tips
    .list({ includeDeleted })
    .sort(
      (a, b) =>
        Number(Boolean(a.deleted)) - Number(Boolean(b.deleted)) ||
        a.variationKey.localeCompare(b.variationKey) ||
        a.id.localeCompare(b.id),
    )
    .map((tip) => ({
      label: tip.deleted ? `$(trash) ${tip.text}` : tip.text,
      description: tipPickDescription(tip),
      detail: tip.id,
      tip,
    }));
  if (!items.length) {
    void vscode.window.showInformationMessage(`EMPO²: run ${tips.currentRunId} has no tips yet.`);
    return undefined;
  }
  return (
    await vscode.window.showQuickPick(items, {
      title,
      matchOnDescription: true,
      matchOnDetail: true,
      placeHolder: 'Search tips by text, variation or id',
    })
  )?.tip;
}

export class AddTipCommand extends CommandBase<TipServices> {
  static readonly id = 'empo2.addTip';

  execute(arg?: unknown): Promise<Tip | undefined> {
    return performAction({
      target: () => this.newTip(arg),
      request: ({ variationKey, text }) => this.services.tips.add(variationKey, text, undefined, newEditId()),
      failed: (error) => showFailure('Adding the tip', error),
    });
  }

  /** The variation and text: the argument's (scripts, tests), else asked for. */
  private async newTip(arg: unknown): Promise<{ variationKey: string; text: string } | undefined> {
    const { tips, runs } = this.services;
    if (!(await tipsReady(this.services, 'Adding a tip'))) {
      return undefined;
    }
    const given = typeof arg === 'object' && arg !== null ? (arg as { variationKey?: unknown; text?: unknown }) : {};
    let variationKey = typeof given.variationKey === 'string' ? given.variationKey : undefined;
    if (!variationKey) {
      const run = runs.get(tips.currentRunId!);
      const variations = tips.variations(configuredVariations(run?.config));
      const picked = await vscode.window.showQuickPick([...variations, '$(edit) Another variation…'], {
        title: 'EMPO²: Add Tip — which task variation?',
        placeHolder: 'task/variation, e.g. power-device/3',
      });
      variationKey = picked?.startsWith('$(edit)')
        ? await vscode.window.showInputBox({
            title: 'EMPO²: Add Tip',
            prompt: 'Task variation (task/variation)',
            validateInput: (v) => (v.trim() ? undefined : 'Required'),
          })
        : picked;
    }
    if (!variationKey) {
      return undefined;
    }
    const text =
      typeof given.text === 'string'
        ? given.text
        : await vscode.window.showInputBox({
            title: `EMPO²: Add Tip to ${variationKey}`,
            prompt: "What should the agent remember? Retrieval ranks a person's tip above the policy's own.",
            ignoreFocusOut: true,
            validateInput: (v) => (v.trim() ? undefined : 'Write the tip'),
          });
    return text?.trim() ? { variationKey: variationKey.trim(), text: text.trim() } : undefined;
  }
}

export class EditTipCommand extends CommandBase<TipServices> {
  static readonly id = 'empo2.editTip';

  /** Arguments: a tip id (or `{ tipId }`) and, for scripts and tests, the new text. */
  async execute(arg?: unknown, textArg?: unknown): Promise<Tip | undefined> {
    const tip = await readyTip(this.services, 'Editing a tip', arg, 'EMPO²: Edit Tip');
    if (!tip) {
      return undefined;
    }
    const text =
      typeof textArg === 'string'
        ? textArg
        : await vscode.window.showInputBox({
            title: `EMPO²: Edit Tip ${tip.id} (${tip.variationKey}, v${tip.version})`,
            value: tip.text,
            ignoreFocusOut: true,
            validateInput: (v) => (v.trim() ? undefined : 'A tip cannot be empty; use Delete Tip to remove it'),
          });
    if (!text?.trim() || text.trim() === tip.text) {
      return undefined;
    }
    return this.save({ tipId: tip.id, text: text.trim(), expectedVersion: tip.version });
  }

  private async save(edit: TipEdit): Promise<Tip | undefined> {
    const { tipId, text } = edit;
    try {
      const outcome = await this.services.tips.update({ editId: newEditId(), ...edit });
      if (outcome.kind === 'saved') {
        void vscode.window.setStatusBarMessage(`EMPO²: tip ${tipId} saved (v${outcome.tip.version})`, 4_000);
        return outcome.tip;
      }
      const current = outcome.current;
      const choice = await vscode.window.showWarningMessage(
        `Tip ${tipId} changed while you edited it (now v${current.version}, by ${current.author}). Nothing was saved.`,
        { modal: true, detail: `Yours:\n${text}\n\nCurrent:\n${current.text}` },
        KEEP_MINE,
        KEEP_CURRENT,
      );
      return choice === KEEP_MINE ? this.save({ ...edit, expectedVersion: current.version }) : current;
    } catch (error) {
      await showFailure(`Saving tip ${tipId}`, error);
      return undefined;
    }
  }
}

export class DeleteTipCommand extends CommandBase<TipServices> {
  static readonly id = 'empo2.deleteTip';

  async execute(arg?: unknown, confirmArg?: unknown): Promise<boolean> {
    const outcome = await performAction({
      target: () => readyTip(this.services, 'Deleting a tip', arg, 'EMPO²: Delete Tip'),
      confirm: (tip) => confirmArg === true || confirmTipDeletion(tip.id, tip),
      request: (tip) => this.services.tips.delete({ tipId: tip.id, expectedVersion: tip.version }),
      report: (result, tip) =>
        result.kind === 'conflict' &&
        void vscode.window.showWarningMessage(
          `EMPO²: tip ${tip.id} changed meanwhile (now v${result.current.version}); nothing was deleted. Read it again first.`,
        ),
      failed: (error, tip) => showFailure(`Deleting tip ${tip.id}`, error),
    });
    return outcome !== undefined && outcome.kind !== 'conflict';
  }
}

export class ShowTipHistoryCommand extends CommandBase<TipServices> {
  static readonly id = 'empo2.showTipHistory';

  /** Opens the tip's history as a read-only Markdown document, oldest version first. */
  execute(arg?: unknown): Promise<vscode.TextDocument | undefined> {
    return performAction({
      target: () => readyTip(this.services, "A tip's history", arg, 'EMPO²: Show Tip History', true),
      request: (tip) => this.showHistory(tip),
      failed: (error, tip) => showFailure(`Reading the history of tip ${tip.id}`, error),
    });
  }

  private async showHistory(tip: Tip): Promise<vscode.TextDocument> {
    const versions = await this.services.tips.history(tip.id);
    const lines = [
      `# Tip ${tip.id} — ${tip.variationKey}`,
      '',
      `Run ${this.services.tips.currentRunId}; now at version ${tip.version}${tip.deleted ? ' (deleted: retrieval no longer returns it)' : ''}, first written by ${authorName(tip.author)}.`,
      '',
      ...versions.flatMap((v) => [`## ${versionLine(v)}${v.at ? ` · ${v.at}` : ''}`, '', v.text, '']),
    ];
    return this.services.histories.show(this.services.tips.currentRunId ?? 'run', tip.id, lines.join('\n'));
  }
}
