import type * as vscode from 'vscode';
import { registerCommands } from '../common/command';
import { contextKeys } from '../common/contextKeys';
import type { HostFeature } from '../host/activate';
import type { RunsFeature } from '../runs/activate';
import { branchRuns, HAS_BRANCH_CONTEXT } from './branches';
import { ComparisonPanel } from './comparisonPanel';
import { AdoptBranchCommand, CompareWithParentCommand, DeleteBranchCommand, RerunUpdateCommand } from './rerunCommands';
import { RerunJobs } from './rerunJobs';

/** Rerun Off-Policy Update, the branch commands, the rerun jobs' progress, the comparison panel
 *  and the context key that says a branch exists. */
export function activateRerun(
  context: vscode.ExtensionContext,
  { host, runs }: HostFeature & RunsFeature,
): ComparisonPanel {
  const comparison = new ComparisonPanel(context.extensionUri);
  const jobs = new RerunJobs(host, runs);
  const services = { host, runs, jobs, panel: comparison };
  const setBranchContext = contextKeys(() => ({ [HAS_BRANCH_CONTEXT]: branchRuns(runs.list()).length > 0 }));
  context.subscriptions.push(
    comparison,
    jobs,
    runs.onDidChangeRuns(setBranchContext),
    runs.onDidChangeRun(setBranchContext),
    registerCommands(
      [RerunUpdateCommand, CompareWithParentCommand, AdoptBranchCommand, DeleteBranchCommand].map(
        (Rerun) => new Rerun(services),
      ),
    ),
  );
  setBranchContext();
  return comparison;
}
