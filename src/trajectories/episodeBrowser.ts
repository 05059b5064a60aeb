import * as vscode from 'vscode';
import { Disposable } from '../common/lifecycle';
import type { HostLog } from '../host/hostLog';
import { describeError } from '../rpc/errors';
import type { RunsModel } from '../runs/runsModel';
import type { EpisodePanel } from './episodePanel';
import type { TrajectoryModel } from './trajectoryModel';
import type { TreeElement } from './trajectoryNodes';

/**
 * Connects the Trajectories tree to the episode view: a click on an episode (or one of its steps)
 * shows it (the rows carry the empo2.openEpisode command), and a link from a tip to the episode
 * that wrote it shows it and reveals it in the tree. Selecting any row also makes its run the
 * current one (tips, metrics, run commands).
 */
export class EpisodeBrowser extends Disposable {
  constructor(
    private readonly model: TrajectoryModel,
    private readonly runs: RunsModel,
    private readonly treeView: vscode.TreeView<TreeElement>,
    readonly panel: EpisodePanel,
    private readonly log: HostLog,
  ) {
    super();
    this._register(treeView.onDidChangeSelection(({ selection }) => this.selected(selection[0])));
    this._register(model.onDidWriteIteration(({ runId, iteration }) => this.written(runId, iteration)));
  }

  /** An episode shown as it ended gives way to its record once its iteration is written. */
  private written(runId: string, iteration: number): void {
    const shown = this.panel.current;
    if (shown?.provisional && shown.runId === runId && shown.episode.iteration === iteration) {
      void this.show(runId, shown.episode.id, shown.focusStep);
    }
  }

  private selected(element: TreeElement | undefined): void {
    if (element && element.kind !== 'message' && element.kind !== 'more') {
      this.runs.select(element.runId);
    }
  }

  /** Shows an episode and reveals it in the tree (a tip's provenance link). */
  async open(runId: string, episodeId: string): Promise<void> {
    await this.show(runId, episodeId, undefined, /* preserveFocus */ false);
    const iteration = Number(/^i(\d+)-/.exec(episodeId)?.[1]);
    try {
      const node = Number.isFinite(iteration) ? await this.model.episodeNode(runId, episodeId, iteration) : undefined;
      if (node) {
        await this.treeView.reveal(node, { select: false, focus: false, expand: false });
      }
    } catch (error) {
      this.log.warn(`Cannot reveal ${episodeId} in the tree: ${describeError(error)}`);
    }
  }

  /** Shows an episode (scrolled to a step) in the episode view. */
  async show(runId: string, episodeId: string, focusStep?: number, preserveFocus = true): Promise<void> {
    this.log.info(`Opening episode ${episodeId} of ${runId}${focusStep !== undefined ? ` at step ${focusStep}` : ''}.`);
    try {
      this.panel.show(runId, await this.model.episode(runId, episodeId), focusStep, preserveFocus);
    } catch (error) {
      void vscode.window.showErrorMessage(`EMPO²: cannot open episode ${episodeId}: ${describeError(error)}`);
    }
  }
}
