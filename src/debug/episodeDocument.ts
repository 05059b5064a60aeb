// The episode as a read-only virtual document, one line per turn (`observation → action`), so
// breakpoints go in its gutter: line k + 1 is turn k. Lines for turns not played yet are there
// too (up to the episode's step limit), so a breakpoint can wait on turn 12 before it exists.
// No vscode import: the adapter and its tests use this without an editor.

import type { DebugTurn } from '../rpc/debugProtocol';

export const EPISODE_SCHEME = 'empo2-episode';
export const EPISODE_LANGUAGE = 'empo2-episode';

/** The document's path for an episode: `/<run>/<episode or task-variation-seed>.empo2-episode`. */
export function episodePath(runId: string | undefined, name: string): string {
  const safe = (s: string) => s.replace(/[^A-Za-z0-9._~-]+/g, '-');
  return `/${safe(runId ?? 'policy')}/${safe(name)}.empo2-episode`;
}

/** Turn index of a 1-based document line, or undefined past the step limit. */
export function turnOfLine(line: number): number {
  return line - 1;
}

export function lineOfTurn(turn: number): number {
  return turn + 1;
}

function oneLine(text: string, max = 90): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

/** The document's text for the turns played so far and the ones still to come. */
export function episodeText(turns: readonly DebugTurn[], totalLines: number, recorded?: readonly string[]): string {
  const lines: string[] = [];
  const count = Math.max(totalLines, turns.length);
  for (let k = 0; k < count; k++) {
    const turn = turns[k];
    if (turn) {
      const marks = [
        turn.forced ? 'forced' : '',
        turn.corrected ? `corrected to "${turn.executedAction}"` : '',
        turn.reward ? `reward ${turn.reward}` : '',
        turn.done ? (turn.success ? 'success' : 'failed') : '',
      ]
        .filter(Boolean)
        .join(', ');
      lines.push(`turn ${k}: ${oneLine(turn.observation)} → ${turn.action}${marks ? `   [${marks}]` : ''}`);
    } else if (recorded?.[k] !== undefined) {
      lines.push(`turn ${k}: (recorded) → ${recorded[k]}`);
    } else {
      lines.push(`turn ${k}: (not played yet)`);
    }
  }
  return lines.join('\n') + '\n';
}
