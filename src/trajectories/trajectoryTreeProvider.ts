import * as vscode from 'vscode';
import { Disposable } from '../common/lifecycle';
import { describeError } from '../rpc/errors';
import { present } from './presentation';
import { TrajectoryModel } from './trajectoryModel';
import type { TreeElement } from './trajectoryNodes';
import { TrajectoryTreeItem } from './trajectoryTreeItem';

export type { TreeElement };

/**
 * The Trajectories tree: Run → Iteration → Task group → Episode → Step, from TrajectoryModel.
 * getChildren() only reads (a failed request becomes a message row, never a popup); the model's
 * change events refresh just the nodes that changed, so expansion and selection survive a live
 * run. viewsWelcome (package.json) explains the empty tree.
 */
export class TrajectoryTreeProvider extends Disposable implements vscode.TreeDataProvider<TreeElement> {
  static readonly viewId = 'empo2.trajectories';

  private readonly _onDidChangeTreeData = this._register(new vscode.EventEmitter<TreeElement | undefined>());
  readonly onDidChangeTreeData = this._onDidChangeTreeData.event;

  constructor(readonly model: TrajectoryModel) {
    super();
    this._register(model.onDidChange((node) => this._onDidChangeTreeData.fire(node)));
  }

  getTreeItem(element: TreeElement): vscode.TreeItem {
    if (element.kind === 'message') {
      const item = new vscode.TreeItem(element.text, vscode.TreeItemCollapsibleState.None);
      item.id = element.id;
      item.iconPath = new vscode.ThemeIcon(element.waiting ? 'loading~spin' : 'warning');
      item.contextValue = element.waiting ? 'empo2.waiting' : 'empo2.message';
      item.tooltip = element.text; // a narrow sidebar cuts the row: the whole sentence on hover
      return item;
    }
    return new TrajectoryTreeItem(element.id, present(element, this.model));
  }

  async getChildren(element?: TreeElement): Promise<TreeElement[]> {
    if (element?.kind === 'message') {
      return [];
    }
    try {
      const children = await this.model.getChildren(element);
      const waiting = element && this.model.waitingRow(element);
      return waiting ? [waiting, ...children] : children;
    } catch (error) {
      return [
        {
          kind: 'message',
          id: `${element?.id ?? 'root'}/error`,
          parent: element,
          text: `Cannot load: ${describeError(error)}`,
        },
      ];
    }
  }

  getParent(element: TreeElement): TreeElement | undefined {
    return element.parent;
  }

  /** Forgets what was loaded and reads the whole tree again (ids keep expansion and selection). */
  refresh(): void {
    this.model.clear();
  }
}
