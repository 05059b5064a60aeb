import * as vscode from 'vscode';
import { CommandBase } from '../common/command';
import type { RunsModel } from '../runs/runsModel';
import type { DebugFeature } from './debugFeature';
import { tipIdOfVariable } from './tipVariables';

/** What VS Code passes a `debug/variables/context` command: the variable the menu was opened on. */
interface VariableMenuArgument {
  readonly variable?: { readonly value?: string };
}

/**
 * "Show Tip in Memory Tips", on a retrieved tip in the debugger's Variables view: the tip's card
 * in the Memory Tips view, scrolled to and highlighted, in the run whose memory the session reads.
 */
export class ShowTipCommand extends CommandBase<{
  feature: DebugFeature;
  runs: RunsModel;
  reveal: (tipId: string) => Promise<void>;
}> {
  static readonly id = 'empo2.showTipInMemoryTips';

  async execute(arg?: unknown): Promise<boolean> {
    const { feature, runs, reveal } = this.services;
    const value = (arg as VariableMenuArgument | undefined)?.variable?.value;
    const tipId = typeof value === 'string' ? tipIdOfVariable(value) : undefined;
    if (!tipId) {
      void vscode.window.showInformationMessage(
        'EMPO²: open this from a retrieved tip in the Variables view of an EMPO² debug session.',
      );
      return false;
    }
    const memoryRun = feature.adapters.at(-1)?.memoryRunId;
    if (memoryRun && runs.get(memoryRun) && runs.current?.info.runId !== memoryRun) {
      runs.select(memoryRun); // the tips view shows the current run's memory
    }
    await reveal(tipId);
    return true;
  }
}
