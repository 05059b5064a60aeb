import * as vscode from 'vscode';
import { Disposable } from '../../common/lifecycle';
import { TrajectoryNode } from './trajectoryNode';

/**
 * Data for the Trajectories tree. Runs come from the host's trajectory.* requests, which the
 * protocol client will carry; until then the tree is empty and viewsWelcome (package.json)
 * tells the user how to start. getChildren() only reads: no prompts, no side effects.
 */
export class TrajectoryTreeProvider extends Disposable implements vscode.TreeDataProvider<TrajectoryNode> {
  static readonly viewId = 'empo2.trajectories';

  private readonly _onDidChangeTreeData = this._register(new vscode.EventEmitter<TrajectoryNode | undefined>());
  readonly onDidChangeTreeData = this._onDidChangeTreeData.event;

  getTreeItem(node: TrajectoryNode): vscode.TreeItem {
    return node;
  }

  getChildren(_node?: TrajectoryNode): TrajectoryNode[] {
    return [];
  }

  getParent(node: TrajectoryNode): TrajectoryNode | undefined {
    return node.parent;
  }

  /** Asks VS Code to read the whole tree again (expansion and selection are kept by node id). */
  refresh(): void {
    this._onDidChangeTreeData.fire(undefined);
  }
}
