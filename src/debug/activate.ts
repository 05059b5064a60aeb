import type * as vscode from 'vscode';
import { registerCommands } from '../common/command';
import type { HostFeature } from '../host/activate';
import type { RunsFeature } from '../runs/activate';
import type { TrajectoriesFeature } from '../trajectories/activate';
import { DebugEpisodeCommand, DebugFeature, ShowTokensCommand } from './debugFeature';
import { ShowTipCommand } from './showTipCommand';

/** The `empo2` debug type, Debug Episode…, Show Tokens and Show Tip in Memory Tips. */
export function activateDebug(
  context: vscode.ExtensionContext,
  shared: HostFeature & RunsFeature & TrajectoriesFeature & { readonly revealTip: (tipId: string) => Promise<void> },
): DebugFeature {
  const { host, runs, trajectoryModel, revealTip } = shared;
  const debug = new DebugFeature(host, runs);
  context.subscriptions.push(
    debug,
    registerCommands([
      new DebugEpisodeCommand({ runs, trajectories: trajectoryModel }),
      new ShowTokensCommand({ feature: debug }),
      new ShowTipCommand({ feature: debug, runs, reveal: revealTip }),
    ]),
  );
  return debug;
}
