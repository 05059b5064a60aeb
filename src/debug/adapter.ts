// The `empo2` debug adapter: VS Code's debugger driving one episode on the host (`debug.*`).
// It runs inline in the extension (DebugAdapterInlineImplementation) and in tests behind a
// socket (@vscode/debugadapter-testsupport); it needs only a way to send protocol requests.
//
// Stepping model (docs/debugging.md): one thread; frames episode → turn k → token j. F10 plays
// one turn, F11 reveals the current turn's tokens one at a time, Shift+F11 finishes the turn, F5
// plays until a breakpoint's turn (its condition true), an exception filter, or the end;
// Restart Frame plays a turn again. After a turn is played the debugger stops *on* it, so its
// reward, score and log-probs are in the Variables view. The episode, its frames and variables:
// playedEpisode.ts; breakpoints.ts, replayMismatch.ts and debugConsole.ts do the rest.

import {
  DebugSession,
  InitializedEvent,
  OutputEvent,
  Scope,
  Source,
  StoppedEvent,
  TerminatedEvent,
  Thread,
} from '@vscode/debugadapter';
import type { DebugProtocol } from '@vscode/debugprotocol';
import { Emitter } from '../common/event';
import { describeError } from '../rpc/errors';
import type { DebugTurn, DebugTurnResult } from '../rpc/debugProtocol';
import { EpisodeBreakpoints } from './breakpoints';
import { evaluateInScope, forcedTurnText } from './debugConsole';
import { DebugRequests, type DebugHostApi } from './debugRequests';
import { EPISODE_SCHEME, episodePath, episodeText } from './episodeDocument';
import { ExpressionError } from './expression';
import { describeSession, launchParams, type Empo2LaunchArguments } from './launchConfig';
import { EXCEPTION_FILTERS, stopReason, THREAD } from './stopRules';
import { EPISODE_FRAME, PlayedEpisode, TOKEN_FRAME, TURN_FRAME, withoutKeys } from './playedEpisode';
import { ReplayMismatches, type EpisodeView } from './replayMismatch';
import { VariableValues } from './variableValues';

const START_TIMEOUT_MS = 600_000; // loading a 7B checkpoint and replaying takes minutes
const STEP_TIMEOUT_MS = 300_000;

export class Empo2DebugAdapter extends DebugSession {
  private readonly episode = new PlayedEpisode();
  private readonly breakpoints = new EpisodeBreakpoints();
  private filters = new Set<string>(EXCEPTION_FILTERS.filter((f) => f.default).map((f) => f.filter));
  private configured!: Promise<void>;
  private markConfigured!: () => void;
  private readonly values = new VariableValues();
  private readonly stopped = new Emitter<void>();
  /** The debugger stopped (on a turn, a token, the entry): the token view follows it. Not
   *  onDidSendMessage, which holds one listener only, VS Code's. */
  readonly onDidStop = this.stopped.event;
  private readonly mismatches: ReplayMismatches;
  /** The replayed environment showed another observation than the recorded one (the extension
   *  offers both texts side by side). */
  readonly onDidLeaveRecording: ReplayMismatches['onDidLeaveRecording'];
  private path = '';
  private totalLines = 30;

  constructor(
    private readonly host: DebugHostApi,
    private readonly view?: EpisodeView,
  ) {
    super();
    this.setDebuggerLinesStartAt1(true);
    this.setDebuggerColumnsStartAt1(true);
    this.configured = new Promise((resolve) => (this.markConfigured = resolve));
    this.mismatches = new ReplayMismatches((text) => this.output(text, 'stderr'), view);
    this.onDidLeaveRecording = this.mismatches.onDidLeaveRecording;
  }

  /** The run whose memory the session retrieves from, when it reads one. */
  get memoryRunId(): string | undefined {
    return this.episode.session?.memoryRunId ?? undefined;
  }

  /** The turn the debugger stands on (the token view shows it). */
  get turnInView(): DebugTurn | undefined {
    return this.episode.currentTurn();
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

  protected override async launchRequest(
    response: DebugProtocol.LaunchResponse,
    args: Empo2LaunchArguments,
  ): Promise<void> {
    const params = launchParams(args);
    try {
      const { session } = await this.host.request(DebugRequests.start, params, { timeoutMs: START_TIMEOUT_MS });
      this.episode.session = session;
      const name = session.replay
        ? session.replay.episodeId
        : `${session.task}-${session.variation}-seed${session.seed}`;
      this.path = episodePath(args.runId ?? args.replay?.runId, name);
      this.totalLines = session.replay ? session.replay.turns : (session.maxSteps ?? 30);
      this.refreshDocument();
    } catch (err) {
      this.sendErrorResponse(response, 1, `Could not start the episode: ${describeError(err)}`);
      return;
    }
    this.sendResponse(response);
    this.output(`${this.episode.session.description}\n${describeSession(this.episode.session)}\n`);
    this.mismatches.notice(this.episode.session.replay?.observationMismatch, this.path);
    this.mismatches.forgetStop(); // the stop on entry stands on it
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
    const session = this.episode.session;
    this.episode.session = undefined;
    if (session) {
      this.view?.forget(this.path);
      await this.host.request(DebugRequests.stop, { sessionId: session.sessionId }).catch(() => undefined);
    }
  }

  // -- breakpoints ------------------------------------------------------------------------------

  protected override setBreakPointsRequest(
    response: DebugProtocol.SetBreakpointsResponse,
    args: DebugProtocol.SetBreakpointsArguments,
  ): void {
    const answered = this.breakpoints.set(args, (line) => this.convertClientLineToDebugger(line));
    response.body = { breakpoints: answered };
    this.sendResponse(response);
  }

  protected override setExceptionBreakPointsRequest(
    response: DebugProtocol.SetExceptionBreakpointsResponse,
    args: DebugProtocol.SetExceptionBreakpointsArguments,
  ): void {
    this.filters = new Set(args.filters);
    this.sendResponse(response);
  }

  // -- threads, frames, scopes, variables -------------------------------------------------------

  protected override threadsRequest(response: DebugProtocol.ThreadsResponse): void {
    response.body = { threads: [new Thread(THREAD, 'episode')] };
    this.sendResponse(response);
  }

  protected override stackTraceRequest(response: DebugProtocol.StackTraceResponse): void {
    const frames = this.episode.stackFrames(new Source('episode', this.documentUri));
    response.body = { stackFrames: frames, totalFrames: frames.length };
    this.sendResponse(response);
  }

  // Variable handles live for one suspension, as DAP allows: they are dropped when the next stop
  // is announced, never on a scopes request, because VS Code's Variables view and any other
  // client (a test, an extension's customRequest) ask for scopes interleaved on the same stop.
  override sendEvent(event: DebugProtocol.Event): void {
    if (event.event === 'stopped') {
      this.values.clear();
    }
    super.sendEvent(event);
    if (event.event === 'stopped') {
      this.stopped.fire();
    }
  }

  protected override scopesRequest(response: DebugProtocol.ScopesResponse, args: DebugProtocol.ScopesArguments): void {
    const scope = this.episode.scopeOfFrame(args.frameId);
    const scopes: Scope[] = [];
    if (args.frameId === TOKEN_FRAME) {
      scopes.push(new Scope('Token', this.values.handle(scope.token ?? null), false));
    }
    if (args.frameId !== EPISODE_FRAME || this.episode.currentTurn()) {
      scopes.push(new Scope('Turn', this.values.handle(withoutKeys(scope, ['token', 'j'])), false));
    }
    scopes.push(new Scope('Episode', this.values.handle(this.episode.episodeScope()), true));
    response.body = { scopes };
    this.sendResponse(response);
  }

  protected override variablesRequest(
    response: DebugProtocol.VariablesResponse,
    args: DebugProtocol.VariablesArguments,
  ): void {
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

  protected override restartFrameRequest(
    response: DebugProtocol.RestartFrameResponse,
    args: DebugProtocol.RestartFrameArguments,
  ): void {
    const turn =
      args.frameId === EPISODE_FRAME ? 0 : (this.episode.pending?.index ?? this.episode.currentTurn()?.index ?? 0);
    this.sendResponse(response);
    void this.run(async () => {
      const result = await this.host.request(
        DebugRequests.replayTurn,
        { sessionId: this.sessionId(), turn },
        { timeoutMs: STEP_TIMEOUT_MS },
      );
      this.episode.forgetFrom(turn);
      if (result.previous) {
        this.output(
          `turn ${turn} replayed; before: ${result.previous.action} (reward ${result.previous.reward ?? 0})\n`,
        );
      }
      this.absorb(result);
      this.sendEvent(this.mismatches.takeStop() ?? new StoppedEvent('restart', THREAD));
    });
  }

  private async continueToBreakpoint(): Promise<void> {
    if (this.episode.done) {
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
      if (this.episode.done) {
        this.output(`episode ended: ${result.episode.success ? 'success' : 'failed'}, score ${result.episode.score}\n`);
        this.sendEvent(new StoppedEvent('end', THREAD));
        return;
      }
    }
  }

  /** After a played turn (F10, Shift+F11): stop on it, unless it ended the episode. */
  private afterTurn(result: DebugTurnResult, reason: string): void {
    const stop = this.stopOn(result.turn);
    if (this.episode.done && !stop) {
      this.output(`episode ended: ${result.episode.success ? 'success' : 'failed'}, score ${result.episode.score}\n`);
    }
    this.sendEvent(stop ?? new StoppedEvent(this.episode.done ? 'end' : reason, THREAD));
  }

  private stopOn(turn: DebugTurn): StoppedEvent | undefined {
    return (
      this.mismatches.takeStop() ??
      stopReason(turn, this.breakpoints.list, this.filters, (text, category) => this.output(text, category))
    );
  }

  private async step(unit: 'token' | 'turn'): Promise<DebugTurnResult> {
    const result = await this.host.request(
      DebugRequests.step,
      { sessionId: this.sessionId(), unit },
      { timeoutMs: STEP_TIMEOUT_MS },
    );
    this.absorb(result);
    return result;
  }

  private absorb(result: DebugTurnResult): void {
    this.episode.absorb(result);
    this.refreshDocument();
    this.mismatches.notice(result.episode.observationMismatch, this.path);
  }

  /** Runs a host call; its failure is reported and the debugger stops where it was. */
  private async run(work: () => Promise<void>): Promise<void> {
    try {
      await work();
    } catch (err) {
      this.output(`${describeError(err)}\n`, 'stderr');
      this.sendEvent(new StoppedEvent('exception', THREAD, describeError(err)));
    }
  }

  // -- the debug console and watch ----------------------------------------------------------------

  protected override async evaluateRequest(
    response: DebugProtocol.EvaluateResponse,
    args: DebugProtocol.EvaluateArguments,
  ): Promise<void> {
    const text = args.expression.trim();
    if (text.startsWith('>') && args.context === 'repl') {
      const action = text.slice(1).trim();
      try {
        const result = await this.host.request(
          DebugRequests.force,
          { sessionId: this.sessionId(), action },
          { timeoutMs: STEP_TIMEOUT_MS },
        );
        this.absorb(result);
        response.body = { result: forcedTurnText(result.turn), variablesReference: 0 };
        this.sendResponse(response);
        this.sendEvent(this.stopOn(result.turn) ?? new StoppedEvent(this.episode.done ? 'end' : 'step', THREAD));
      } catch (err) {
        this.consoleError(response, 2, describeError(err));
      }
      return;
    }
    try {
      response.body = evaluateInScope(text, this.episode.scopeOfFrame(args.frameId ?? TURN_FRAME), this.values);
      this.sendResponse(response);
    } catch (err) {
      this.consoleError(response, 3, err instanceof ExpressionError ? err.message : describeError(err));
    }
  }

  /** An expression's error, for where it was typed (the Debug Console, a watch) and nowhere
   *  else: the default `showUser` would raise each one as an error notification too. */
  private consoleError(response: DebugProtocol.Response, id: number, message: string): void {
    this.sendErrorResponse(response, { id, format: message, showUser: false });
  }

  // -- helpers ---------------------------------------------------------------------------------------

  private refreshDocument(): void {
    this.view?.update(this.path, episodeText(this.episode.turns, this.totalLines));
  }

  private sessionId(): string {
    if (!this.episode.session) {
      throw new Error('the debug session has ended');
    }
    return this.episode.session.sessionId;
  }

  private output(text: string, category: 'console' | 'stderr' = 'console'): void {
    this.sendEvent(new OutputEvent(text, category));
  }
}

export type { Empo2LaunchArguments };
