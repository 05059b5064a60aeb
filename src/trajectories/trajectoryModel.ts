import { Emitter } from '../common/event';
import { Disposable } from '../common/lifecycle';
import type { HostApi } from '../host/hostApi';
import { Notifications } from '../rpc/methods';
import type { MetricsRecord, TrajectoryProgressEvent, TrajectoryStep, TrajectorySummary } from '../rpc/protocol';
import { trainedElsewhere, type RunEntry, type RunsModel } from '../runs/runsModel';
import { isMoving, waitingText } from '../runs/runText';
import {
  groupKeyOf,
  TrajectoryData,
  type IterationData,
  type LiveIteration,
  type LoadedEpisode,
  type TaskGroup,
} from './trajectoryData';
import {
  PAGE_SIZE,
  TrajectoryNodes,
  iterationId,
  ownerOf,
  runNodeId,
  type EpisodeNode,
  type GroupNode,
  type IterationNode,
  type MessageNode,
  type MoreNode,
  type RangeNode,
  type RunNode,
  type StepNode,
  type TrajectoryNode,
} from './trajectoryNodes';

// The Trajectories tree's shape, free of vscode: Run → Iteration → Task group (the N rollouts of
// one task) → Episode → Step. Everything below a run is loaded when its node is expanded, one
// request per expansion, and cached (trajectoryData.ts):
//   run        iterations come from the run's iteration count (no request), newest first; a run
//              of more than PAGE_SIZE iterations shows ranges of PAGE_SIZE (fixed by number,
//              so a growing run never moves an iteration); its metrics (run.metrics, one small
//              request) label them with rollout and update mode;
//   iteration  the iteration's episodes, in task groups; the iteration a live run is playing
//              shows its episodes as they end (trajectory/progress, no request) until it is
//              written, then the written ones;
//   group      the group's episodes;
//   episode    the full episode's steps.
// Other long child lists (they only grow at the end) are paged (trajectoryNodes.ts), so no
// expansion builds more than PAGE_SIZE rows.

/** Runs with more iterations than this are not labelled from run.metrics (too big to fetch for a label). */
const METRICS_LABEL_LIMIT = 5_000;

export class TrajectoryModel extends Disposable {
  private readonly nodes = new TrajectoryNodes();
  private readonly data: TrajectoryData;
  private readonly _onDidChange = this._register(new Emitter<TrajectoryNode | undefined>());
  /** A node whose children or label changed (undefined: the whole tree). */
  readonly onDidChange = this._onDidChange.event;
  private readonly _onDidWriteIteration = this._register(
    new Emitter<{ readonly runId: string; readonly iteration: number }>(),
  );
  /** A live run wrote an iteration: its episodes' records replace the ones loaded as they ended. */
  readonly onDidWriteIteration = this._onDidWriteIteration.event;

  constructor(
    private readonly host: HostApi,
    private readonly runs: RunsModel,
  ) {
    super();
    this.data = new TrajectoryData(host, (runId, iteration) => this.fireIfKnown(iterationId(runId, iteration)));
    this._register(runs.onDidChangeRuns(() => this._onDidChange.fire(undefined)));
    this._register(runs.onDidChangeRun((entry) => this.runChanged(entry)));
    // New iterations appear under the run (RunsModel raised trajectoryIteration; runChanged fires).
    this._register(
      host.on(Notifications.trajectoryAdded, ({ runId, summaries }) => this.trajectoriesAdded(runId, summaries)),
    );
    this._register(host.on(Notifications.trajectoryProgress, (event) => this.episodesEnded(event)));
    this._register(host.on(Notifications.runMetrics, ({ runId, records }) => this.data.metricsArrived(runId, records)));
    this._register(host.onDidConnect(() => this.clear()));
    let heard = this.hostConnected;
    this._register(
      host.health.onDidChange(() => {
        if (heard !== this.hostConnected) {
          heard = this.hostConnected;
          this._onDidChange.fire(undefined); // the runs' icons: no spinner while no host is heard
        }
      }),
    );
  }

  /** The link to the host is down: a live run's state shown is the last one heard. */
  get linkDown(): boolean {
    return this.host.health.isInterrupted;
  }

  /** A host is connected now: a run it lists as active but does not train is another
   *  process's, followed from its files (not a run whose host went away). */
  get hostConnected(): boolean {
    return this.host.current !== undefined && !this.host.health.isInterrupted;
  }

  /** Forgets every cached page (Refresh; a new host). Nodes stay, so expansion survives. */
  clear(): void {
    this.data.clear();
    this._onDidChange.fire(undefined);
  }

  // -- what the tree asks -------------------------------------------------------------------------

  async getChildren(node?: TrajectoryNode): Promise<TrajectoryNode[]> {
    if (!node) {
      // Branch runs sit under their parent when the host lists the parent too.
      return this.runs
        .list()
        .filter((entry) => !(entry.info.parent && this.runs.get(entry.info.parent.runId)))
        .map((entry) => this.nodes.run(entry.info.runId));
    }
    switch (node.kind) {
      case 'run':
        return this.runChildren(node);
      case 'range':
        return this.rangeChildren(node);
      case 'iteration':
        return this.iterationChildren(node);
      case 'taskGroup':
        return this.groupChildren(node);
      case 'episode':
        return this.episodeChildren(node);
      case 'more':
        return this.moreChildren(node);
      case 'step':
        return [];
    }
  }

  getParent(node: TrajectoryNode): TrajectoryNode | undefined {
    return node.parent;
  }

  // -- what labels need -------------------------------------------------------------------------

  run(runId: string): RunEntry | undefined {
    return this.runs.get(runId);
  }

  iterationMetrics(runId: string, iteration: number): MetricsRecord | undefined {
    return this.data.iterationMetrics(runId, iteration);
  }

  iterationData(runId: string, iteration: number): IterationData | undefined {
    return this.data.iterationData(runId, iteration);
  }

  /** The iteration a live run is playing, while it is not written yet. */
  liveIteration(runId: string, iteration: number): LiveIteration | undefined {
    return this.data.liveIteration(runId, iteration);
  }

  /** Whether the episode is known only as it ended: no steps to show until its iteration is written. */
  isProvisional(runId: string, episodeId: string): boolean {
    return this.data.isProvisional(runId, episodeId);
  }

  group(node: GroupNode): TaskGroup | undefined {
    return this.data.iterationData(node.runId, node.iteration)?.groups.get(node.groupKey);
  }

  summary(runId: string, episodeId: string): TrajectorySummary | undefined {
    return this.data.summary(runId, episodeId);
  }

  step(node: StepNode): TrajectoryStep | undefined {
    return this.data.cachedEpisode(node.runId, node.episodeId)?.steps[node.t];
  }

  /** The full episode (cached), for the episode view; provisional while its iteration trains. */
  episode(runId: string, episodeId: string): Promise<LoadedEpisode> {
    return this.data.episode(runId, episodeId);
  }

  /** The node of an episode (creating its ancestors), for reveal(); the iteration must be loaded. */
  async episodeNode(runId: string, episodeId: string, iteration: number): Promise<EpisodeNode | undefined> {
    const run = this.nodes.run(runId);
    const iterationParent = this.usesRanges(runId)
      ? this.nodes.range(
          run,
          Math.floor((iteration - 1) / PAGE_SIZE) * PAGE_SIZE + 1,
          Math.floor((iteration - 1) / PAGE_SIZE) * PAGE_SIZE + PAGE_SIZE,
        )
      : run;
    const iterationNode = this.nodes.iteration(iterationParent, iteration);
    const data = await this.data.loadIteration(runId, iteration);
    const summary = this.data.summary(runId, episodeId);
    if (!summary) {
      return undefined;
    }
    const keys = [...data.groups.keys()];
    const groupKey = groupKeyOf(summary);
    const group = this.nodes.group(
      this.nodes.pageParent(iterationNode, keys.indexOf(groupKey), 'task groups'),
      iterationNode,
      groupKey,
    );
    const index = data.groups.get(groupKey)!.episodes.findIndex((e) => e.id === episodeId);
    return this.nodes.episode(this.nodes.pageParent(group, index, 'episodes'), group, episodeId);
  }

  // -- children --------------------------------------------------------------------------------

  /** Iterations the run has (completed, with trajectories already written, or playing with episodes ended). */
  iterationCount(runId: string): number {
    return Math.max(this.writtenCount(runId), this.data.liveIteration(runId)?.iteration ?? 0);
  }

  private writtenCount(runId: string): number {
    const entry = this.runs.get(runId);
    return entry ? Math.max(entry.info.iteration, entry.trajectoryIteration) : 0;
  }

  private usesRanges(runId: string): boolean {
    const entry = this.runs.get(runId);
    return Math.max(this.iterationCount(runId), entry?.info.iterations ?? 0) > PAGE_SIZE;
  }

  private runChildren(node: RunNode): TrajectoryNode[] {
    const branches = this.runs
      .list()
      .filter((entry) => entry.info.parent?.runId === node.runId)
      .map((entry) => this.nodes.run(entry.info.runId, node));
    return [...branches, ...this.runIterations(node)];
  }

  /**
   * The row the tree shows first under a run that trains but has no iteration row yet, saying
   * what it waits for; undefined otherwise. Its id stays while the text changes (step 120 of
   * 3000…), and it goes when the first episode ends (its iteration's row comes instead).
   */
  waitingRow(node: TrajectoryNode): MessageNode | undefined {
    const entry = node.kind === 'run' ? this.runs.get(node.runId) : undefined;
    const text = entry && this.waiting(entry);
    return text ? { kind: 'message', id: `${node.id}/waiting`, parent: node, text, waiting: true } : undefined;
  }

  /** What a training run waits for (runText.waitingText); of a run another process trains, only
   *  while a host follows it (with the host gone its last progress is not news). */
  waiting(entry: RunEntry): string | undefined {
    if (trainedElsewhere(entry.info) && !this.hostConnected) {
      return undefined;
    }
    return waitingText(entry, this.iterationCount(entry.info.runId));
  }

  private runIterations(node: RunNode): TrajectoryNode[] {
    const count = this.iterationCount(node.runId);
    if (count <= METRICS_LABEL_LIMIT) {
      void this.data.loadMetrics(node.runId);
    }
    if (!this.usesRanges(node.runId)) {
      // Newest first: a live run grows at the top, where the user is looking.
      return descending(1, count).map((iteration) => this.nodes.iteration(node, iteration));
    }
    const ranges: RangeNode[] = [];
    for (let first = Math.floor((count - 1) / PAGE_SIZE) * PAGE_SIZE + 1; first >= 1; first -= PAGE_SIZE) {
      ranges.push(this.nodes.range(node, first, first + PAGE_SIZE - 1));
    }
    return ranges;
  }

  private rangeChildren(node: RangeNode): TrajectoryNode[] {
    const last = Math.min(node.last, this.iterationCount(node.runId));
    return descending(node.first, last).map((iteration) => this.nodes.iteration(node, iteration));
  }

  private async iterationChildren(node: IterationNode): Promise<TrajectoryNode[]> {
    const keys = [...(await this.data.loadIteration(node.runId, node.iteration)).groups.keys()];
    return this.nodes.page(node, 0, keys.length, 'task groups', (parent, index) =>
      this.nodes.group(parent, node, keys[index]),
    );
  }

  private groupChildren(node: GroupNode): TrajectoryNode[] {
    const episodes = this.group(node)?.episodes ?? [];
    return this.nodes.page(node, 0, episodes.length, 'episodes', (parent, index) =>
      this.nodes.episode(parent, node, episodes[index].id),
    );
  }

  private async episodeChildren(node: EpisodeNode): Promise<TrajectoryNode[]> {
    const { episode } = await this.episode(node.runId, node.episodeId);
    return this.nodes.page(node, 0, episode.steps.length, 'steps', (parent, index) =>
      this.nodes.step(parent, node, index),
    );
  }

  private async moreChildren(node: MoreNode): Promise<TrajectoryNode[]> {
    const owner = ownerOf(node);
    switch (owner.kind) {
      case 'iteration': {
        const keys = [...(await this.data.loadIteration(owner.runId, owner.iteration)).groups.keys()];
        return this.nodes.page(node, node.offset, keys.length, node.what, (parent, index) =>
          this.nodes.group(parent, owner, keys[index]),
        );
      }
      case 'taskGroup': {
        const episodes = this.group(owner)?.episodes ?? [];
        return this.nodes.page(node, node.offset, episodes.length, node.what, (parent, index) =>
          this.nodes.episode(parent, owner, episodes[index].id),
        );
      }
      case 'episode': {
        const { episode } = await this.episode(owner.runId, owner.episodeId);
        return this.nodes.page(node, node.offset, episode.steps.length, node.what, (parent, index) =>
          this.nodes.step(parent, owner, index),
        );
      }
      default:
        return [];
    }
  }

  /** How many children a "more" node stands for (its page and every later one). */
  remaining(node: MoreNode): number {
    // A "more" node VS Code still shows after a refresh may page past what is known now: none.
    return Math.max(0, this.childCount(ownerOf(node)) - node.offset);
  }

  private childCount(owner: TrajectoryNode): number {
    switch (owner.kind) {
      case 'iteration':
        return this.iterationData(owner.runId, owner.iteration)?.groups.size ?? 0;
      case 'taskGroup':
        return this.group(owner)?.episodes.length ?? 0;
      case 'episode':
        return this.data.cachedEpisode(owner.runId, owner.episodeId)?.steps.length ?? 0;
      default:
        return 0;
    }
  }

  // -- following a live run ---------------------------------------------------------------------

  private runChanged(entry: RunEntry): void {
    // A run that stopped moving mid-iteration (it failed, its host went away) will not write
    // the iteration it was playing: its provisional row goes.
    if (!isMoving(entry)) {
      this.data.dropLive(entry.info.runId);
    }
    this.fireIfKnown(runNodeId(entry.info.runId));
    const live = this.data.liveIteration(entry.info.runId);
    if (live) {
      this.fireIfKnown(iterationId(entry.info.runId, live.iteration)); // its row names the phase
    }
  }

  private trajectoriesAdded(runId: string, summaries: readonly TrajectorySummary[]): void {
    this.data.trajectoriesAdded(runId, summaries);
    for (const iteration of new Set(summaries.map((s) => s.iteration))) {
      this._onDidWriteIteration.fire({ runId, iteration });
    }
  }

  private episodesEnded(event: TrajectoryProgressEvent): void {
    const entry = this.runs.get(event.runId);
    if (!entry || event.iteration <= this.writtenCount(event.runId)) {
      return; // a run the tree does not list, or an iteration already written
    }
    if (this.data.episodesEnded(event)) {
      this.fireIfKnown(runNodeId(event.runId)); // a new iteration row under the run
    }
  }

  private fireIfKnown(id: string): void {
    const node = this.nodes.get(id);
    if (node) {
      this._onDidChange.fire(node);
    }
  }
}

function descending(first: number, last: number): number[] {
  const values: number[] = [];
  for (let value = last; value >= first; value--) {
    values.push(value);
  }
  return values;
}
