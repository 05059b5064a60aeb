// The nodes of the Trajectories tree and their ids. A node is created once per id and reused,
// so the tree provider can fire a change for the very object VS Code holds, and VS Code keeps
// the user's expansion and selection as a live run grows. Long child lists are paged: after
// PAGE_SIZE children comes a "more" node whose children are the next page.

/** Children per page, and iterations per range of a long run. */
export const PAGE_SIZE = 200;

export type TrajectoryNode = RunNode | RangeNode | IterationNode | GroupNode | EpisodeNode | StepNode | MoreNode;

/**
 * A row that says why a node has no children (the host is gone, a request failed), or, with
 * `waiting`, what a run waits for before its first iteration shows (presentation.waitingText).
 */
export interface MessageNode {
  readonly kind: 'message';
  readonly id: string;
  readonly parent: TrajectoryNode | undefined;
  readonly text: string;
  readonly waiting?: boolean;
}

/** Every row of the tree. */
export type TreeElement = TrajectoryNode | MessageNode;

interface NodeBase {
  readonly id: string;
  readonly parent: TrajectoryNode | undefined;
}

export interface RunNode extends NodeBase {
  readonly kind: 'run';
  readonly runId: string;
}

/** Iterations first..last of a long run. */
export interface RangeNode extends NodeBase {
  readonly kind: 'range';
  readonly runId: string;
  readonly first: number;
  readonly last: number;
}

export interface IterationNode extends NodeBase {
  readonly kind: 'iteration';
  readonly runId: string;
  readonly iteration: number;
}

export interface GroupNode extends NodeBase {
  readonly kind: 'taskGroup';
  readonly runId: string;
  readonly iteration: number;
  readonly groupKey: string;
}

export interface EpisodeNode extends NodeBase {
  readonly kind: 'episode';
  readonly runId: string;
  readonly episodeId: string;
}

export interface StepNode extends NodeBase {
  readonly kind: 'step';
  readonly runId: string;
  readonly episodeId: string;
  readonly t: number;
}

/** "N more…": its children are the next page of its parent's children. */
export interface MoreNode extends NodeBase {
  readonly kind: 'more';
  /** The owner, or the previous page's "more" node: a "more" node always has a parent. */
  readonly parent: TrajectoryNode;
  /** Index of the first child of the page it stands for. */
  readonly offset: number;
  readonly what: string;
}

export class TrajectoryNodes {
  private readonly nodes = new Map<string, TrajectoryNode>();

  get(id: string): TrajectoryNode | undefined {
    return this.nodes.get(id);
  }

  private remember<T extends TrajectoryNode>(node: T): T {
    const existing = this.nodes.get(node.id);
    if (existing) {
      return existing as T;
    }
    this.nodes.set(node.id, node);
    return node;
  }

  /** A run's node; a branch run's sits under its parent's (`parent`). */
  run(runId: string, parent?: RunNode): RunNode {
    return this.remember({ kind: 'run', id: runNodeId(runId), parent, runId });
  }

  range(run: RunNode, first: number, last: number): RangeNode {
    return this.remember({
      kind: 'range',
      id: `${run.id}/r${first}-${last}`,
      parent: run,
      runId: run.runId,
      first,
      last,
    });
  }

  /** An iteration's node under its run, or under its range in a long run. */
  iteration(parent: RunNode | RangeNode, iteration: number): IterationNode {
    return this.remember({
      kind: 'iteration',
      id: iterationId(parent.runId, iteration),
      parent,
      runId: parent.runId,
      iteration,
    });
  }

  group(parent: TrajectoryNode, iteration: IterationNode, groupKey: string): GroupNode {
    return this.remember({
      kind: 'taskGroup',
      id: `${iteration.id}/g:${groupKey}`,
      parent,
      runId: iteration.runId,
      iteration: iteration.iteration,
      groupKey,
    });
  }

  episode(parent: TrajectoryNode, group: GroupNode, episodeId: string): EpisodeNode {
    return this.remember({ kind: 'episode', id: `${group.id}/${episodeId}`, parent, runId: group.runId, episodeId });
  }

  step(parent: TrajectoryNode, episode: EpisodeNode, t: number): StepNode {
    return this.remember({
      kind: 'step',
      id: `${episode.id}/t${t}`,
      parent,
      runId: episode.runId,
      episodeId: episode.episodeId,
      t,
    });
  }

  /** The "more" node of the page starting at `offset`; its id names the page, so it is stable. */
  more(parent: TrajectoryNode, offset: number, what: string): MoreNode {
    const owner = parent.kind === 'more' ? ownerOf(parent) : parent;
    return this.remember({ kind: 'more', id: `${owner.id}/more@${offset}`, parent, offset, what });
  }

  /** The parent an index of an owner's paged children sits under (the owner, or a "more" node). */
  pageParent(owner: TrajectoryNode, index: number, what: string): TrajectoryNode {
    let parent = owner;
    for (let offset = PAGE_SIZE; offset <= index; offset += PAGE_SIZE) {
      parent = this.more(parent, offset, what);
    }
    return parent;
  }

  /**
   * Children [offset, offset + PAGE_SIZE) of a list of `total` under `parent` (the owner, or the
   * "more" node of that page), then the next page's "more" node if any remain.
   */
  page(
    parent: TrajectoryNode,
    offset: number,
    total: number,
    what: string,
    child: (parent: TrajectoryNode, index: number) => TrajectoryNode,
  ): TrajectoryNode[] {
    const end = Math.min(total, offset + PAGE_SIZE);
    const children: TrajectoryNode[] = [];
    for (let index = offset; index < end; index++) {
      children.push(child(parent, index));
    }
    if (end < total) {
      children.push(this.more(parent, end, what));
    }
    return children;
  }
}

export function runNodeId(runId: string): string {
  return `run:${runId}`;
}

export function iterationId(runId: string, iteration: number): string {
  return `${runNodeId(runId)}/i${iteration}`;
}

/** The real node a chain of "more" nodes pages. */
export function ownerOf(node: MoreNode): TrajectoryNode {
  let owner = node.parent;
  while (owner.kind === 'more') {
    owner = owner.parent;
  }
  return owner;
}
