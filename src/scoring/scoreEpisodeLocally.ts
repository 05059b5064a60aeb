import * as vscode from 'vscode';
import { existsSync } from 'node:fs';
import * as path from 'node:path';
import { CommandBase } from '../common/command';
import type { Settings } from '../common/settings';
import type { DebugTurn } from '../rpc/debugProtocol';
import type { TrajectoryNode } from '../trajectories/trajectoryNodes';
import { replayLocally, type LocalReplay } from './localReplay';
import { OnnxPolicy, ScoringError } from './onnxPolicy';
import {
  episodeRecord,
  episodeSummaries,
  exportedIterations,
  exportFolder,
  iterationName,
  isRunFolder,
  producingExport,
} from './runFolderReader';

/** What scripts and tests may pass instead of picking: a run folder, an episode, a turn to show. */
export interface ScoreLocallyArg {
  readonly run: string;
  readonly episodeId?: string;
  readonly exportFolder?: string;
  readonly turn?: number;
}

/** Where a scored turn is shown: the debugger's token view (debug/tokenView.ts), handed in by activate(). */
export interface TurnView {
  show(turn: DebugTurn): Promise<unknown>;
}

const CHOOSE_FOLDER = 'Choose Export Folder…';

/**
 * "EMPO²: Score Episode Locally (ONNX)": a recorded episode of a run folder on this machine,
 * re-scored by an ONNX export with onnxruntime-node, with no host; its turns open in the
 * debugger's token view. Works on a run folder copied from a GPU box (src/scoring/, docs/debugging.md).
 */
export class ScoreEpisodeLocallyCommand extends CommandBase<{ settings: Settings; tokens: TurnView }> {
  static readonly id = 'empo2.scoreEpisodeLocally';

  /** From the palette, an episode row of the Trajectories tree, or a ScoreLocallyArg. */
  async execute(arg?: unknown): Promise<LocalReplay | undefined> {
    try {
      return await this.score(arg);
    } catch (error) {
      if (error instanceof ScoringError) {
        void vscode.window.showErrorMessage(`EMPO²: ${error.message}`);
        return undefined;
      }
      throw error;
    }
  }

  private async score(arg: unknown): Promise<LocalReplay | undefined> {
    const given = isScoreArg(arg) ? arg : undefined;
    const node = !given && isEpisodeNode(arg) ? arg : undefined;
    const run = given?.run ?? (await this.runFolder(node?.runId));
    if (!run) {
      return undefined;
    }
    const summaries = episodeSummaries(run);
    const episodeId = given?.episodeId ?? node?.episodeId ?? (await pickEpisode(summaries));
    const summary = summaries.find((s) => s.id === episodeId);
    if (!episodeId) {
      return undefined;
    }
    if (!summary) {
      throw new ScoringError(`episode ${episodeId} is not in ${run}'s trajectories/index.jsonl.`);
    }
    const folder =
      given?.exportFolder ?? producingExport(run, summary.iteration) ?? (await pickExport(run, summary.iteration));
    if (!folder) {
      return undefined;
    }
    const episode = episodeRecord(run, summary.iteration, episodeId);
    const replay = await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: `EMPO²: scoring ${episodeId} with onnxruntime` },
      async () => {
        const policy = await OnnxPolicy.load(folder);
        try {
          return await replayLocally(policy, episode, policy.manifest.temperature ?? 1, path.basename(run));
        } finally {
          await policy.dispose();
        }
      },
    );
    const turn = given?.turn !== undefined ? replay.turns[given.turn] : await pickTurn(replay);
    if (turn) {
      await this.services.tokens.show(turn);
    }
    return replay;
  }

  /** The tree's run, when its folder is under the run root here; else the user picks one. */
  private async runFolder(runId: string | undefined): Promise<string | undefined> {
    const root = this.services.settings.runRoot?.fsPath;
    if (runId && root && isRunFolder(path.join(root, runId))) {
      return path.join(root, runId);
    }
    const picked = await vscode.window.showOpenDialog({
      title: 'EMPO²: Score Episode Locally: which run folder?',
      openLabel: 'Score Its Episodes',
      canSelectFiles: false,
      canSelectFolders: true,
      defaultUri: root && existsSync(root) ? vscode.Uri.file(root) : undefined,
    });
    return picked?.[0]?.fsPath;
  }
}

function isScoreArg(arg: unknown): arg is ScoreLocallyArg {
  return typeof arg === 'object' && arg !== null && typeof (arg as ScoreLocallyArg).run === 'string';
}

function isEpisodeNode(arg: unknown): arg is Extract<TrajectoryNode, { kind: 'episode' | 'step' }> {
  const kind = (arg as TrajectoryNode | undefined)?.kind;
  return kind === 'episode' || kind === 'step';
}

async function pickEpisode(summaries: ReturnType<typeof episodeSummaries>): Promise<string | undefined> {
  if (summaries.length === 0) {
    throw new ScoringError('this run folder has no recorded episodes yet.');
  }
  const items = [...summaries].reverse().map((s) => ({
    label: s.id,
    description: `${s.task}/${s.variation} · return ${s.return} · ${s.rollout_mode}${s.success ? ' · success' : ''}`,
  }));
  return (await vscode.window.showQuickPick(items, { title: 'Score which episode?', matchOnDescription: true }))?.label;
}

/** No export of the producing checkpoint: another of the run's, or a folder, said plainly. */
async function pickExport(run: string, iteration: number): Promise<string | undefined> {
  const wanted = iterationName(iteration - 1);
  const items = exportedIterations(run).map((i) => ({ label: iterationName(i), folder: exportFolder(run, i) }));
  const hint = `Episodes of iteration ${iteration} were played by checkpoint ${wanted}, which has no export in ${path.join(run, 'onnx')} (\`empo2-host export-onnx ${path.join(run, 'checkpoints', wanted)}\` where the checkpoints are)`;
  if (items.length === 0) {
    const choice = await vscode.window.showWarningMessage(
      `EMPO²: ${hint}. Score it with another export?`,
      CHOOSE_FOLDER,
    );
    return choice === CHOOSE_FOLDER ? chooseFolder() : undefined;
  }
  const picked = await vscode.window.showQuickPick([...items, { label: CHOOSE_FOLDER, folder: '' }], {
    title: `${hint}; its recorded log-probs will differ. Score with:`,
  });
  return picked?.label === CHOOSE_FOLDER ? chooseFolder() : picked?.folder;
}

async function chooseFolder(): Promise<string | undefined> {
  const picked = await vscode.window.showOpenDialog({
    title: 'An `empo2-host export-onnx` folder',
    canSelectFiles: false,
    canSelectFolders: true,
  });
  return picked?.[0]?.fsPath;
}

async function pickTurn(replay: LocalReplay): Promise<DebugTurn | undefined> {
  const { summary } = replay;
  const items = replay.turns.map((turn) => ({
    label: `turn ${turn.index}: ${turn.action}`,
    description: `max |re-scored − recorded| log p ${turn.replay?.maxLogprobError.toExponential(1)}${turn.greedyDiffers ? ' · greedy would differ' : ''}`,
    turn,
  }));
  const first =
    summary.firstDifferentTurn === null
      ? 'greedy decoding would act as recorded throughout'
      : `first different turn: ${summary.firstDifferentTurn}`;
  return (
    await vscode.window.showQuickPick(items, {
      title: `${summary.episodeId}: largest error ${summary.maxLogprobError.toExponential(1)}; ${first}. Show the tokens of:`,
    })
  )?.turn;
}
