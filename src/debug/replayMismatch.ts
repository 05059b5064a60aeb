import { StoppedEvent } from '@vscode/debugadapter';
import type { DebugProtocol } from '@vscode/debugprotocol';
import { Emitter } from '../common/event';
import type { DebugObservationMismatch } from '../rpc/debugProtocol';
import { THREAD } from './stopRules';

/** A replay that left its recording, and the two documents holding its observations. */
export interface LeftRecording {
  readonly mismatch: DebugObservationMismatch;
  /** Paths (in the episode documents' scheme) of the recorded and the replayed observation. */
  readonly recordedPath: string;
  readonly replayedPath: string;
}

/** Where the episode's document is; the extension shows it (a test only reads it). */
export interface EpisodeView {
  update(path: string, text: string): void;
  forget(path: string): void;
}

/**
 * The replay's observation mismatches, for the debug adapter. A replay that left its recording is
 * said once, where it happened: in the Debug Console with both texts, as the reason of the next
 * stop, and to the extension (a notice with a diff).
 */
export class ReplayMismatches {
  private readonly left = new Emitter<LeftRecording>();
  /** The replayed environment showed another observation than the recorded one (the extension
   *  offers both texts side by side). */
  readonly onDidLeaveRecording = this.left.event;
  /** The mismatch said last (its turn), until the host no longer reports one (a rewind before it). */
  private said: number | undefined;
  /** A mismatch found by the last step, for the stop after it. */
  private toStopOn: DebugObservationMismatch | undefined;

  constructor(
    private readonly say: (text: string) => void,
    private readonly view?: EpisodeView,
  ) {}

  /** What the host reported of the episode after a step; `documentPath`: the episode's document. */
  notice(mismatch: DebugObservationMismatch | null | undefined, documentPath: string): void {
    if (!mismatch) {
      this.said = undefined;
      return;
    }
    if (this.said === mismatch.turn) {
      return;
    }
    this.said = mismatch.turn;
    this.toStopOn = mismatch;
    this.say(`${mismatch.message}\n  recorded: ${mismatch.recorded}\n  replayed: ${mismatch.replayed}\n`);
    const base = documentPath.replace(/\.empo2-episode$/, '');
    const left = {
      mismatch,
      recordedPath: `${base}.turn-${mismatch.turn}.recorded.txt`,
      replayedPath: `${base}.turn-${mismatch.turn}.replayed.txt`,
    };
    this.view?.update(left.recordedPath, mismatch.recorded);
    this.view?.update(left.replayedPath, mismatch.replayed);
    this.left.fire(left);
  }

  /** No stop for the mismatch found so far (the stop on entry stands on it). */
  forgetStop(): void {
    this.toStopOn = undefined;
  }

  /** The stop on a replay that has just left its recording, whatever the filters: every turn
   *  after it is the policy's own. Taken once. */
  takeStop(): StoppedEvent | undefined {
    const mismatch = this.toStopOn;
    this.toStopOn = undefined;
    if (!mismatch) {
      return undefined;
    }
    const event = new StoppedEvent('exception', THREAD, mismatch.message) as DebugProtocol.StoppedEvent;
    event.body.description = mismatch.message;
    return event;
  }
}
