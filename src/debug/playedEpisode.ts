import { StackFrame, type Source } from '@vscode/debugadapter';
import type {
  DebugEpisodeState,
  DebugObservationMismatch,
  DebugSession as HostDebugSession,
  DebugTurn,
  DebugTurnResult,
} from '../rpc/debugProtocol';
import { lineOfTurn } from './episodeDocument';
import type { Value } from './expression';
import { tokenScope, turnScope } from './turnScope';

// What the debug adapter (adapter.ts) knows of the episode it plays, and the views of it VS Code
// asks for: the stack (episode → turn k → token j) and each frame's variables. The adapter does
// the protocol; this holds no connection and sends nothing.

export const EPISODE_FRAME = 1;
export const TURN_FRAME = 2;
export const TOKEN_FRAME = 3;

export class PlayedEpisode {
  /** The host's session, once debug.start answered. */
  session: HostDebugSession | undefined;
  /** The turns played, in order. */
  turns: DebugTurn[] = [];
  /** The turn being generated (F11 reveals its tokens), not yet played. */
  pending: DebugTurn | undefined;
  /** How many of the pending turn's tokens are revealed. */
  revealed = 0;
  done = false;
  /** The host's word on the episode after the last step (whether turns still come from the
   *  recording, where the environment left it). */
  private state: DebugEpisodeState | undefined;

  /** Takes in what a step, a forced action or a replayed turn did. */
  absorb(result: DebugTurnResult): void {
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
    this.state = result.episode;
  }

  /** Where a replay's environment left the recording: a step's answer once there was one, else
   *  a reset found other when the session started. */
  observationMismatch(): DebugObservationMismatch | null {
    if (this.state) {
      return this.state.observationMismatch ?? null;
    }
    return this.session?.replay?.observationMismatch ?? null;
  }

  /** Restart Frame: the turns from `turn` on are played again. */
  forgetFrom(turn: number): void {
    this.turns = this.turns.slice(0, turn);
  }

  /** The turn the debugger stands on: the one being generated, else the last played. */
  currentTurn(): DebugTurn | undefined {
    return this.pending ?? this.turns[this.turns.length - 1];
  }

  /** Innermost first: the revealed token, the current turn, the episode. */
  stackFrames(source: Source): StackFrame[] {
    const frames: StackFrame[] = [];
    const current = this.currentTurn();
    if (this.pending && this.revealed > 0) {
      const j = this.revealed - 1;
      const token = this.pending.tokens[j];
      frames.push(
        new StackFrame(
          TOKEN_FRAME,
          `token ${j}: ${JSON.stringify(token?.text ?? '')} (log p ${token ? token.logprob.toFixed(3) : '?'})`,
          source,
          lineOfTurn(this.pending.index),
          1,
        ),
      );
    }
    if (current) {
      const label = current.executed
        ? `turn ${current.index}: ${current.executedAction ?? current.action}`
        : `turn ${current.index} (generating)`;
      frames.push(new StackFrame(TURN_FRAME, label, source, lineOfTurn(current.index), 1));
    }
    const state = this.done ? 'ended' : `${this.turns.length} turns played`;
    frames.push(
      new StackFrame(
        EPISODE_FRAME,
        `episode ${this.session?.task ?? ''} #${this.session?.variation ?? ''} (${state})`,
        source,
        current ? lineOfTurn(current.index) : 1,
        1,
      ),
    );
    return frames;
  }

  /** The variables of a frame (also what watch and console expressions read). */
  scopeOfFrame(frameId: number): Record<string, Value> {
    const turn = this.currentTurn();
    if (!turn) {
      return this.episodeScope();
    }
    if (frameId === TOKEN_FRAME && this.pending && this.revealed > 0) {
      return tokenScope(this.pending, this.revealed - 1);
    }
    return turnScope(turn, this.pending === turn ? this.revealed : turn.tokens.length);
  }

  episodeScope(): Record<string, Value> {
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
      replaying: this.state ? this.state.replaying : Boolean(s?.replay) && !this.observationMismatch(),
      left_recording: mismatchValue(this.observationMismatch()),
    };
  }
}

/** The Variables view's `left_recording`: the turn and both observations, expandable. */
function mismatchValue(mismatch: DebugObservationMismatch | null): Value {
  return mismatch
    ? { turn: mismatch.turn, recorded: mismatch.recorded, replayed: mismatch.replayed, message: mismatch.message }
    : null;
}

export function withoutKeys(scope: Record<string, Value>, keys: string[]): Record<string, Value> {
  const copy = { ...scope };
  for (const key of keys) {
    delete copy[key];
  }
  return copy;
}
