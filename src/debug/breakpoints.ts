import { Breakpoint } from '@vscode/debugadapter';
import type { DebugProtocol } from '@vscode/debugprotocol';
import { describeError } from '../rpc/errors';
import { turnOfLine } from './episodeDocument';
import { Expression } from './expression';
import type { LineBreakpoint } from './stopRules';

/** The breakpoints set on the episode document: a line is a turn; a condition is an expression of
 *  the turn's scope (expression.ts), checked when it is set. */
export class EpisodeBreakpoints {
  private nextId = 1;
  private breakpoints: LineBreakpoint[] = [];

  get list(): readonly LineBreakpoint[] {
    return this.breakpoints;
  }

  /** setBreakpoints: replaces them all; the answer says of each whether it holds, and if not why.
   *  `debuggerLine` turns a client's line number into the adapter's. */
  set(args: DebugProtocol.SetBreakpointsArguments, debuggerLine: (line: number) => number): DebugProtocol.Breakpoint[] {
    const ours = !args.source.path || args.source.path.endsWith('.empo2-episode');
    this.breakpoints = [];
    return (args.breakpoints ?? []).map((bp) => {
      const line = debuggerLine(bp.line);
      let condition: Expression | undefined;
      let problem: string | undefined;
      if (bp.condition) {
        try {
          condition = new Expression(bp.condition);
        } catch (err) {
          problem = `condition: ${describeError(err)}`;
        }
      }
      const id = this.nextId++;
      const verified = ours && !problem && line >= 1;
      if (verified) {
        this.breakpoints.push({ turn: turnOfLine(line), condition, logMessage: bp.logMessage, id });
      }
      const answer = new Breakpoint(verified, bp.line) as DebugProtocol.Breakpoint;
      answer.id = id;
      if (problem || !ours) {
        answer.message = problem ?? 'breakpoints of an EMPO² episode go in its episode document';
      }
      return answer;
    });
  }
}
