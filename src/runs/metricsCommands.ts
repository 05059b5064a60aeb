import * as vscode from 'vscode';
import { CommandBase, performAction } from '../common/command';
import { showFailure } from '../host/notices';
import { pickRuns, type MetricsTarget } from './pickRuns';
import { namedRun, type RunServices } from './runCommands';

// Show Metrics and Compare Runs' Metrics: the metrics panel, of one run or of several.

export class ShowMetricsCommand extends CommandBase<RunServices> {
  static readonly id = 'empo2.showMetrics';

  /** Argument: a run id, or the Uri of a run folder (read from disk, no host needed). */
  async execute(arg?: unknown): Promise<void> {
    const { host, runs, metrics } = this.services;
    try {
      if (arg instanceof vscode.Uri) {
        await metrics.showFolder(arg);
        return;
      }
      // The run asked for, else the current one (the run the status bar names, the live run
      // unless another was opened or selected since).
      const runId = namedRun(arg) ?? runs.current?.info.runId;
      if (host.current && runId) {
        await metrics.showRun(runId);
        return;
      }
      // No host (or no run): a finished run's metrics.jsonl can be read straight from its folder.
      const folder = (
        await vscode.window.showOpenDialog({
          title: 'EMPO²: metrics of a run folder (no host needed)',
          canSelectFiles: false,
          canSelectFolders: true,
          openLabel: 'Show Metrics',
        })
      )?.[0];
      if (folder) {
        await metrics.showFolder(folder);
      }
    } catch (error) {
      await showFailure('Showing the metrics', error);
    }
  }
}

export class CompareMetricsCommand extends CommandBase<RunServices> {
  static readonly id = 'empo2.compareMetrics';

  /**
   * Arguments: from the Trajectories tree, the clicked run and every selected row (two or more
   * selected runs are compared at once; one is ticked in the pick); from scripts and tests, an
   * array of run ids and run-folder Uris, compared without a pick.
   */
  async execute(clicked?: unknown, selected?: unknown): Promise<void> {
    const { host, runs, metrics } = this.services;
    await performAction({
      target: (): MetricsTarget[] | Promise<MetricsTarget[] | undefined> | undefined => {
        if (Array.isArray(clicked) && clicked.length > 0 && clicked.every(isMetricsTarget)) {
          return clicked;
        }
        const chosen = [
          ...new Set(
            (Array.isArray(selected) ? selected : [clicked])
              .map((arg) => targetRunOf(arg))
              .filter((id): id is string => id !== undefined),
          ),
        ];
        if (chosen.length >= 2) {
          return chosen;
        }
        // The run the person looks at comes ticked (the current one: the status bar names it).
        const preselect = chosen.length
          ? chosen
          : [runs.current?.info.runId].filter((id): id is string => id !== undefined);
        return pickRuns(host, runs, { title: "EMPO²: Compare Runs' Metrics", preselect });
      },
      request: (targets) => metrics.compare(targets),
      failed: (error) => showFailure("Comparing the runs' metrics", error),
    });
  }
}

function isMetricsTarget(arg: unknown): arg is MetricsTarget {
  return typeof arg === 'string' || arg instanceof vscode.Uri;
}

/** The run id of a tree row or a run id; undefined for other rows (episodes, iterations). */
function targetRunOf(arg: unknown): string | undefined {
  if (typeof arg === 'string') {
    return arg;
  }
  if (
    typeof arg === 'object' &&
    arg !== null &&
    (arg as { kind?: unknown }).kind === 'run' &&
    typeof (arg as { runId?: unknown }).runId === 'string'
  ) {
    return (arg as { runId: string }).runId;
  }
  return undefined;
}
