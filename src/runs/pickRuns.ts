import * as vscode from 'vscode';
import type { HostApi } from '../host/hostApi';
import { iterationText } from './runText';
import type { RunsModel } from './runsModel';

/** A run whose metrics to show: a run id the host knows, or a run folder read from disk. */
export type MetricsTarget = string | vscode.Uri;

interface RunItem extends vscode.QuickPickItem {
  readonly runId: string;
}

/**
 * Asks which runs to chart together: with a host, a multi-select pick of the runs of its run
 * roots (`preselect` ticked, `exclude` left out); without one, run folders chosen in a dialog
 * (their metrics.jsonl is read from disk). Undefined when cancelled or nothing was chosen.
 */
export async function pickRuns(
  host: HostApi,
  runs: RunsModel,
  options: { readonly title: string; readonly preselect?: readonly string[]; readonly exclude?: readonly string[] },
): Promise<MetricsTarget[] | undefined> {
  if (!host.current) {
    const folders = await vscode.window.showOpenDialog({
      title: `${options.title}: run folders (no host needed)`,
      canSelectFiles: false,
      canSelectFolders: true,
      canSelectMany: true,
      openLabel: 'Show Metrics',
    });
    return folders?.length ? folders : undefined;
  }
  const items: RunItem[] = runs
    .list()
    .filter((entry) => !options.exclude?.includes(entry.info.runId))
    .map((entry) => ({
      label: entry.info.runId,
      description: iterationText(entry),
      detail: entry.info.path,
      picked: options.preselect?.includes(entry.info.runId) ?? false,
      runId: entry.info.runId,
    }));
  if (items.length === 0) {
    void vscode.window.showInformationMessage(
      'EMPO²: the host knows no other run; open a run folder or start a run first.',
    );
    return undefined;
  }
  const picked = await vscode.window.showQuickPick(items, {
    title: options.title,
    placeHolder: 'Tick the runs to overlay on one set of charts (each run in its own colour)',
    canPickMany: true,
    matchOnDetail: true,
    ignoreFocusOut: true,
  });
  return picked?.length ? picked.map((item) => item.runId) : undefined;
}
