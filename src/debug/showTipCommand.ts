import * as vscode from 'vscode';
import type { Command } from '../common/command';
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
export class ShowTipCommand implements Command {
  static readonly id = 'empo2.showTipInMemoryTips';
  readonly id = ShowTipCommand.id;

  constructor(
    private readonly feature: DebugFeature,
    private readonly runs: RunsModel,
    private readonly reveal: (tipId: string) => Promise<void>,
  ) {}

  async execute(arg?: unknown): Promise<boolean> {
    const value = (arg as VariableMenuArgument | undefined)?.variable?.value;
    const tipId = typeof value === 'string' ? tipIdOfVariable(value) : undefined;
    if (!tipId) {
      void vscode.window.showInformationMessage('EMPO²: open this from a retrieved tip in the Variables view of an EMPO² debug session.');
      return false;
    }
    const memoryRun = this.feature.adapters.at(-1)?.memoryRunId;
    if (memoryRun && this.runs.get(memoryRun) && this.runs.current?.info.runId !== memoryRun) {
      this.runs.select(memoryRun); // the tips view shows the current run's memory
    }
    await this.reveal(tipId);
    return true;
  }
}
