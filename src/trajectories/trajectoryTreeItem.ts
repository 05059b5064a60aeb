import * as vscode from 'vscode';
import { OpenEpisodeCommand } from './openEpisode';
import type { NodePresentation } from './presentation';

const COLLAPSIBLE: Record<NodePresentation['collapsible'], vscode.TreeItemCollapsibleState> = {
  none: vscode.TreeItemCollapsibleState.None,
  collapsed: vscode.TreeItemCollapsibleState.Collapsed,
  expanded: vscode.TreeItemCollapsibleState.Expanded,
};

/**
 * One row of the Trajectories tree, built from its presentation. `contextValue`
 * (`empo2.run`, `empo2.episode`, …) selects its menus; the id keeps expansion and selection
 * when the tree refreshes.
 */
export class TrajectoryTreeItem extends vscode.TreeItem {
  constructor(id: string, presentation: NodePresentation) {
    super(presentation.label, COLLAPSIBLE[presentation.collapsible]);
    this.id = id;
    this.description = presentation.description;
    this.contextValue = presentation.contextValue;
    if (presentation.icon) {
      this.iconPath = new vscode.ThemeIcon(
        presentation.icon.id,
        presentation.icon.color ? new vscode.ThemeColor(presentation.icon.color) : undefined,
      );
    }
    if (presentation.tooltip) {
      this.tooltip = new vscode.MarkdownString(presentation.tooltip);
    }
    if (presentation.open) {
      const { runId, episodeId, step } = presentation.open;
      this.command = { command: OpenEpisodeCommand.id, title: 'Open Episode', arguments: [runId, episodeId, step] };
    }
  }
}
