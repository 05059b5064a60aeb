import * as vscode from 'vscode';

/** The levels of the tree: Run → Iteration → Task group (N rollouts of one task) → Episode → Step. */
export type TrajectoryNodeKind = 'run' | 'iteration' | 'taskGroup' | 'episode' | 'step';

/**
 * One row of the Trajectories tree. `contextValue` (`empo2.run`, `empo2.episode`, …) selects
 * its menus; `parent` makes getParent() and so reveal() work.
 */
export class TrajectoryNode extends vscode.TreeItem {
  constructor(
    readonly kind: TrajectoryNodeKind,
    readonly key: string,
    label: string,
    readonly parent: TrajectoryNode | undefined,
  ) {
    super(label, kind === 'step' ? vscode.TreeItemCollapsibleState.None : vscode.TreeItemCollapsibleState.Collapsed);
    this.id = parent ? `${parent.id}/${key}` : key;
    this.contextValue = `empo2.${kind}`;
  }
}
