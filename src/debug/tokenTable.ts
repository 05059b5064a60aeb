// The token view's table: one line per token, its log-probability with tips and without them
// side by side, the importance ratio and the mask the off-policy update would apply (replayed
// training episodes), and which colour bucket each log-prob falls in. Pure: unit-tested.

import type { DebugTurn } from '../rpc/debugProtocol';

export const TOKENS_SCHEME = 'empo2-tokens';

/** Log-prob buckets, most likely first: ≥ −0.5, ≥ −2, ≥ −5, below (the mask's default log δ). */
export const BUCKETS = [-0.5, -2, -5] as const;

export function bucketOf(logprob: number): number {
  const index = BUCKETS.findIndex((edge) => logprob >= edge);
  return index === -1 ? BUCKETS.length : index;
}

export interface TokenCell {
  readonly line: number;
  readonly start: number;
  readonly end: number;
  readonly bucket: number;
}

const COLUMN = 14;

function cell(text: string): string {
  return text.length >= COLUMN ? text.slice(0, COLUMN - 1) + ' ' : text.padEnd(COLUMN);
}

/** The view's text and the cells to colour. */
export function tokenTable(turn: DebugTurn): { text: string; cells: TokenCell[] } {
  const header =
    `turn ${turn.index}: ${turn.action}` +
    (turn.replay ? `   (recorded; advantage ${turn.replay.advantage ?? '—'}, ${turn.replay.updateMode ?? ''})` : '');
  const lines = [
    header,
    cell('token') + cell('log p tips') + cell('log p no tips') + cell('ratio') + cell('masked') + 'top-5',
  ];
  const cells: TokenCell[] = [];
  for (const token of turn.tokens) {
    const line = lines.length;
    const withTips = cell(token.logprob.toFixed(3));
    const without = cell(token.logprobNoTips.toFixed(3));
    const ratio = cell(token.ratio === null ? '—' : token.ratio.toFixed(3));
    const masked = cell(token.masked === null ? '—' : token.masked ? 'masked' : '');
    const top = token.alternatives.map((a) => `${a.text} ${a.logprob.toFixed(2)}`).join(' · ');
    cells.push({ line, start: COLUMN, end: 2 * COLUMN - 1, bucket: bucketOf(token.logprob) });
    cells.push({ line, start: 2 * COLUMN, end: 3 * COLUMN - 1, bucket: bucketOf(token.logprobNoTips) });
    lines.push(cell(JSON.stringify(token.text)) + withTips + without + ratio + masked + top);
  }
  return { text: lines.join('\n') + '\n', cells };
}
