// The `empo2` debug adapter: VS Code's debugger driving one episode on the host (`debug.*`).
// It runs inline in the extension (DebugAdapterInlineImplementation) and in tests behind a
// socket (@vscode/debugadapter-testsupport); it needs only a way to send protocol requests.
//
// Stepping model (docs/debugging.md): one thread; frames episode → turn k → token j. F10 plays
// one turn, F11 reveals the current turn's tokens one at a time, Shift+F11 finishes the turn, F5
// plays until a breakpoint's turn (its condition true), an exception filter, or the end;
// Restart Frame plays a turn again. After a turn is played the debugger stops *on* it, so its
// reward, score and log-probs are in the Variables view.

import {
  Breakpoint,
  DebugSession,
  InitializedEvent,
  OutputEvent,
  Scope,
  Source,
  StackFrame,
  StoppedEvent,
  TerminatedEvent,
  Thread,
} from '@vscode/debugadapter';
import type { DebugProtocol } from '@vscode/debugprotocol';
import type { RequestType } from '../rpc/methods';
import type {
  DebugSession as HostDebugSession,
  DebugTurn,
  DebugTurnResult,
} from '../rpc/debugProtocol';
import { DebugRequests } from './debugRequests';
import { EPISODE_SCHEME, episodePath, episodeText, lineOfTurn, turnOfLine } from './episodeDocument';
import { Expression, ExpressionError, show, type Value } from './expression';
import { describeSession, launchParams, type Empo2LaunchArguments } from './launchConfig';
import { EXCEPTION_FILTERS, stopReason, THREAD, type LineBreakpoint } from './stopRules';
import { tokenScope, turnScope } from './turnScope';
import { VariableValues } from './variableValues';

export interface DebugHostApi {
  request<Params, Result>(type: RequestType<Params, Result>, params: Params, options?: { timeoutMs?: number }): Promise<Result>;
}

/** Where the episode's document is; the extension shows it (a test only reads it). */
export interface EpisodeView {
  update(path: string, text: string): void;
  forget(path: string): void;
}

const EPISODE_FRAME = 1;
const TURN_FRAME = 2;
const TOKEN_FRAME = 3;
const START_TIMEOUT_MS = 600_000; // loading a 7B checkpoint and replaying takes minutes
const STEP_TIMEOUT_MS = 300_000;

export class Empo2DebugAdapter extends DebugSession {
  private session: HostDebugSession | undefined;
  private turns: DebugTurn[] = [];
  private pending: DebugTurn | undefined;
  private revealed = 0;
  private done = false;
  private breakpoints: LineBreakpoint[] = [];
  private filters = new Set<string>(EXCEPTION_FILTERS.filter((f) => f.default).map((f) => f.filter));
  private configured!: Promise<void>;
  private markConfigured!: () => void;
  private readonly values = new VariableValues();
  private nextBreakpointId = 1;
  private path = '';
  private totalLines = 30;

  constructor(private readonly host: DebugHostApi, private readonly view?: EpisodeView) {
    super();
    this.setDebuggerLinesStartAt1(true);
    this.setDebuggerColumnsStartAt1(true);
    this.configured = new Promise((resolve) => (this.markConfigured = resolve));
  }

  /** The run whose memory the session retrieves from, when it reads one. */
  get memoryRunId(): string | undefined {
    return this.session?.memoryRunId ?? undefined;
  }

  /** The turn the debugger stands on (the token view shows it). */
  get turnInView(): DebugTurn | undefined {
    return this.currentTurn();
  }

  /** The URI of the episode's document (what breakpoints are set on). */
  get documentUri(): string {
    return `${EPISODE_SCHEME}:${this.path}`;
  }

  // -- lifecycle ------------------------------------------------------------------------------

  protected override initializeRequest(response: DebugProtocol.InitializeResponse): void {
    response.body = {
      supportsConfigurationDoneRequest: true,
      supportsConditionalBreakpoints: true,
      supportsLogPoints: true,
      supportsEvaluateForHovers: false,
      supportsRestartFrame: true,
      supportsTerminateRequest: true,
      exceptionBreakpointFilters: EXCEPTION_FILTERS,
    };
    this.sendResponse(response);
  }

  protected override async launchRequest(response: DebugProtocol.LaunchResponse, args: Empo2LaunchArguments): Promise<void> {
    const params = launchParams(args);
    try {
      const { session } = await this.host.request(DebugRequests.start, params, { timeoutMs: START_TIMEOUT_MS });
      this.session = session;
      const name = session.replay ? session.replay.episodeId : `${session.task}-${session.variation}-seed${session.seed}`;
      this.path = episodePath(args.runId ?? args.replay?.runId, name);
      this.totalLines = session.replay ? session.replay.turns : session.maxSteps ?? 30;
      this.refreshDocument();
    } catch (err) {
      this.sendErrorResponse(response, 1, `Could not start the episode: ${message(err)}`);
      return;
    }
    this.sendResponse(response);
    this.output(`${this.session.description}\n${describeSession(this.session)}\n`);
    this.sendEvent(new InitializedEvent());
    await this.configured;
    if (args.stopOnFirstDifference) {
      this.filters.add('differs');
    }
    if (args.stopOnEntry !== false) {
      this.sendEvent(new StoppedEvent('entry', THREAD));
    } else {
      void this.run(() => this.continueToBreakpoint());
    }
  }

  protected override configurationDoneRequest(response: DebugProtocol.ConfigurationDoneResponse): void {
    this.sendResponse(response);
    this.markConfigured();
  }

  protected override async disconnectRequest(response: DebugProtocol.DisconnectResponse): Promise<void> {
    await this.stopHostSession();
    this.sendResponse(response);
  }

  protected override async terminateRequest(response: DebugProtocol.TerminateResponse): Promise<void> {
    await this.stopHostSession();
    this.sendResponse(response);
    this.sendEvent(new TerminatedEvent());
  }

  private async stopHostSession(): Promise<void> {
    const session = this.session;
    this.session = undefined;
    if (session) {
      this.view?.forget(this.path);
      await this.host.request(DebugRequests.stop, { sessionId: session.sessionId }).catch(() => undefined);
    }
  }

  // -- breakpoints ------------------------------------------------------------------------------

  protected override setBreakPointsRequest(response: DebugProtocol.SetBreakpointsResponse, args: DebugProtocol.SetBreakpointsArguments): void {
    const wanted = args.breakpoints ?? [];
    const ours = !args.source.path || args.source.path.endsWith('.empo2-episode');
    this.breakpoints = [];
    const answered: DebugProtocol.Breakpoint[] = [];
    for (const bp of wanted) {
      const line = this.convertClientLineToDebugger(bp.line);
      let condition: Expression | undefined;
      let problem: string | undefined;
      if (bp.condition) {
        try {
          condition = new Expression(bp.condition);
        } catch (err) {
          problem = `condition: ${message(err)}`;
        }
      }
      const id = this.nextBreakpointId++;
      const verified = ours && !problem && line >= 1;
      if (verified) {
        this.breakpoints.push({ turn: turnOfLine(line), condition, logMessage: bp.logMessage, id });
      }
      const answer = new Breakpoint(verified, bp.line) as DebugProtocol.Breakpoint;
      answer.id = id;
      if (problem || !ours) {
        answer.message = problem ?? 'breakpoints of an EMPO² episode go in its episode document';
      }
      answered.push(answer);
    }
    response.body = { breakpoints: answered };
    this.sendResponse(response);
  }

  protected override setExceptionBreakPointsRequest(response: DebugProtocol.SetExceptionBreakpointsResponse, args: DebugProtocol.SetExceptionBreakpointsArguments): void {
    this.filters = new Set(args.filters);
    this.sendResponse(response);
  }

  // -- threads, frames, scopes, variables -------------------------------------------------------

  protected override threadsRequest(response: DebugProtocol.ThreadsResponse): void {
    response.body = { threads: [new Thread(THREAD, 'episode')] };
    this.sendResponse(response);
  }

  protected override stackTraceRequest(response: DebugProtocol.StackTraceResponse): void {
    const source = new Source('episode', this.documentUri);
    const frames: StackFrame[] = [];
    const current = this.currentTurn();
    if (this.pending && this.revealed > 0) {
      const j = this.revealed - 1;
      const token = this.pending.tokens[j];
      frames.push(new StackFrame(TOKEN_FRAME, `token ${j}: ${JSON.stringify(token?.text ?? '')} (log p ${token ? token.logprob.toFixed(3) : '?'})`, source, lineOfTurn(this.pending.index), 1));
    }
    if (current) {
      const label = current.executed ? `turn ${current.index}: ${current.executedAction ?? current.action}` : `turn ${current.index} (generating)`;
      frames.push(new StackFrame(TURN_FRAME, label, source, lineOfTurn(current.index), 1));
    }
    const state = this.done ? 'ended' : `${this.turns.length} turns played`;
    frames.push(new StackFrame(EPISODE_FRAME, `episode ${this.session?.task ?? ''} #${this.session?.variation ?? ''} (${state})`, source, current ? lineOfTurn(current.index) : 1, 1));
    response.body = { stackFrames: frames, totalFrames: frames.length };
    this.sendResponse(response);
  }

  protected override scopesRequest(response: DebugProtocol.ScopesResponse, args: DebugProtocol.ScopesArguments): void {
    this.values.clear();
    const scope = this.scopeOfFrame(args.frameId);
    const scopes: Scope[] = [];
    if (args.frameId === TOKEN_FRAME) {
      scopes.push(new Scope('Token', this.values.handle(scope.token ?? null), false));
    }
    if (args.frameId !== EPISODE_FRAME || this.currentTurn()) {
      scopes.push(new Scope('Turn', this.values.handle(withoutKeys(scope, ['token', 'j'])), false));
    }
    scopes.push(new Scope('Episode', this.values.handle(this.episodeScope()), true));
    response.body = { scopes };
    this.sendResponse(response);
  }

  protected override variablesRequest(response: DebugProtocol.VariablesResponse, args: DebugProtocol.VariablesArguments): void {
    const variables = this.values.children(args.variablesReference);
    response.body = { variables };
    this.sendResponse(response);
  }

  // -- stepping -----------------------------------------------------------------------------------

  protected override nextRequest(response: DebugProtocol.NextResponse): void {
    this.sendResponse(response);
    void this.run(async () => this.afterTurn(await this.step('turn'), 'step'));
  }

  protected override stepInRequest(response: DebugProtocol.StepInResponse): void {
    this.sendResponse(response);
    void this.run(async () => {
      const result = await this.step('token');
      if (result.executed) {
        this.afterTurn(result, 'step');
      } else {
        this.sendEvent(new StoppedEvent('step', THREAD));
      }
    });
  }

  protected override stepOutRequest(response: DebugProtocol.StepOutResponse): void {
    this.sendResponse(response);
    void this.run(async () => this.afterTurn(await this.step('turn'), 'step'));
  }

  protected override continueRequest(response: DebugProtocol.ContinueResponse): void {
    response.body = { allThreadsContinued: true };
    this.sendResponse(response);
    void this.run(() => this.continueToBreakpoint());
  }

  protected override restartFrameRequest(response: DebugProtocol.RestartFrameResponse, args: DebugProtocol.RestartFrameArguments): void {
    const turn = args.frameId === EPISODE_FRAME ? 0 : (this.pending?.index ?? this.currentTurn()?.index ?? 0);
    this.sendResponse(response);
    void this.run(async () => {
      const result = await this.host.request(DebugRequests.replayTurn, { sessionId: this.sessionId(), turn }, { timeoutMs: STEP_TIMEOUT_MS });
      this.turns = this.turns.slice(0, turn);
      if (result.previous) {
        this.output(`turn ${turn} replayed; before: ${result.previous.action} (reward ${result.previous.reward ?? 0})\n`);
      }
      this.absorb(result);
      this.sendEvent(new StoppedEvent('restart', THREAD));
    });
  }

  private async continueToBreakpoint(): Promise<void> {
    if (this.done) {
      this.sendEvent(new TerminatedEvent());
      return;
    }
    for (;;) {
      const result = await this.step('turn');
      const stop = this.stopOn(result.turn);
      if (stop) {
        this.sendEvent(stop);
        return;
      }
      if (this.done) {
        this.output(`episode ended: ${result.episode.success ? 'success' : 'failed'}, score ${result.episode.score}\n`);
        this.sendEvent(new StoppedEvent('end', THREAD));
        return;
      }
    }
  }

  /** After a played turn (F10, Shift+F11): stop on it, unless it ended the episode. */
  private afterTurn(result: DebugTurnResult, reason: string): void {
    const stop = this.stopOn(result.turn);
    if (this.done && !stop) {
      this.output(`episode ended: ${result.episode.success ? 'success' : 'failed'}, score ${result.episode.score}\n`);
    }
    this.sendEvent(stop ?? new StoppedEvent(this.done ? 'end' : reason, THREAD));
  }

  private stopOn(turn: DebugTurn): StoppedEvent | undefined {
    return stopReason(turn, this.breakpoints, this.filters, (text, category) => this.output(text, category));
  }

  private async step(unit: 'token' | 'turn'): Promise<DebugTurnResult> {
    const result = await this.host.request(DebugRequests.step, { sessionId: this.sessionId(), unit }, { timeoutMs: STEP_TIMEOUT_MS });
    this.absorb(result);
    return result;
  }

  private absorb(result: DebugTurnResult): void {
    if (result.executed) {
      this.turns[result.turn.index] = result.turn;
      this.turns.length = result.turn.index + 1;
      this.pending = undefined;
      this.revealed = 0;
    } else {
      this.pending = result.turn;
      this.revealed = result.revealed;
    }
    this.done = result.episode.done;
    this.refreshDocument();
  }

  /** Runs a host call; its failure is reported and the debugger stops where it was. */
  private async run(work: () => Promise<void>): Promise<void> {
    try {
      await work();
    } catch (err) {
      this.output(`${message(err)}\n`, 'stderr');
      this.sendEvent(new StoppedEvent('exception', THREAD, message(err)));
    }
  }

  // -- the debug console and watch ----------------------------------------------------------------

  protected override async evaluateRequest(response: DebugProtocol.EvaluateResponse, args: DebugProtocol.EvaluateArguments): Promise<void> {
    const text = args.expression.trim();
    if (text.startsWith('>') && args.context === 'repl') {
      const action = text.slice(1).trim();
      try {
        const result = await this.host.request(DebugRequests.force, { sessionId: this.sessionId(), action }, { timeoutMs: STEP_TIMEOUT_MS });
        this.absorb(result);
        const turn = result.turn;
        response.body = { result: `turn ${turn.index}: ${turn.executedAction} → reward ${turn.reward ?? 0}, score ${turn.score ?? 0}: ${turn.nextObservation ?? ''}`, variablesReference: 0 };
        this.sendResponse(response);
        this.sendEvent(this.stopOn(turn) ?? new StoppedEvent(this.done ? 'end' : 'step', THREAD));
      } catch (err) {
        this.sendErrorResponse(response, 2, message(err));
      }
      return;
    }
    try {
      const value = new Expression(text).evaluate(this.scopeOfFrame(args.frameId ?? TURN_FRAME));
      const isObject = value !== null && typeof value === 'object';
      response.body = { result: isObject ? JSON.stringify(value).slice(0, 2000) : show(value), variablesReference: isObject ? this.values.handle(value) : 0 };
      this.sendResponse(response);
    } catch (err) {
      this.sendErrorResponse(response, 3, err instanceof ExpressionError ? err.message : message(err));
    }
  }

  // -- helpers ---------------------------------------------------------------------------------------

  private currentTurn(): DebugTurn | undefined {
    return this.pending ?? this.turns[this.turns.length - 1];
  }

  private scopeOfFrame(frameId: number): Record<string, Value> {
    const turn = this.currentTurn();
    if (!turn) {
      return this.episodeScope();
    }
    if (frameId === TOKEN_FRAME && this.pending && this.revealed > 0) {
      return tokenScope(this.pending, this.revealed - 1);
    }
    return turnScope(turn, this.pending === turn ? this.revealed : turn.tokens.length);
  }

  private episodeScope(): Record<string, Value> {
    const s = this.session;
    const last = this.turns[this.turns.length - 1];
    return {
      task: s?.task ?? null,
      variation: s?.variation ?? null,
      seed: s?.seed ?? null,
      mode: s?.mode ?? null,
      description: s?.description ?? null,
      policy: s?.policy ?? null,
      checkpoint: s?.checkpoint ?? null,
      temperature: s?.temperature ?? null,
      turns_played: this.turns.length,
      done: this.done,
      score: last?.score ?? 0,
      success: last?.success ?? false,
      first_different_turn: s?.replay?.firstDifferentTurn ?? null,
      replay_logprob_error: s?.replay?.maxLogprobError ?? null,
      advantage: s?.replay?.advantage ?? null,
    };
  }

  private refreshDocument(): void {
    this.view?.update(this.path, episodeText(this.turns, this.totalLines));
  }

  private sessionId(): string {
    if (!this.session) {
      throw new Error('the debug session has ended');
    }
    return this.session.sessionId;
  }

  private output(text: string, category: 'console' | 'stderr' = 'console'): void {
    this.sendEvent(new OutputEvent(text, category));
  }
}

function withoutKeys(scope: Record<string, Value>, keys: string[]): Record<string, Value> {
  const copy = { ...scope };
  for (const key of keys) {
    delete copy[key];
  }
  return copy;
}

function message(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

export type { Empo2LaunchArguments };
