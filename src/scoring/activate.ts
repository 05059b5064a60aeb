import type * as vscode from 'vscode';
import { registerCommands } from '../common/command';
import type { HostFeature } from '../host/activate';
import { ScoreEpisodeLocallyCommand, type TurnView } from './scoreEpisodeLocally';

/** Score Episode Locally (ONNX), shown in the debugger's token view (`tokens`). */
export function activateScoring(context: vscode.ExtensionContext, { settings }: HostFeature, tokens: TurnView): void {
  context.subscriptions.push(registerCommands([new ScoreEpisodeLocallyCommand({ settings, tokens })]));
}
