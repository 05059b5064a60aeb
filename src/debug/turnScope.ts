// The names a breakpoint condition, a logpoint, a watch expression and the Variables view see
// for one turn: one table, so `reward > 0` in the gutter and `reward` in Watch are the same value.
// Snake_case, as researchers write them in Python (`min_logprob < -5`, `tips_retrieved == 0`).

import type { DebugToken, DebugTurn } from '../rpc/debugProtocol';
import type { Value } from './expression';

function tokenValue(token: DebugToken): Value {
  return {
    text: token.text,
    id: token.id,
    logprob: token.logprob,
    logprob_no_tips: token.logprobNoTips,
    tips_effect: token.logprob - token.logprobNoTips,
    ratio: token.ratio,
    masked: token.masked,
    alternatives: token.alternatives.map((a) => ({ text: a.text, id: a.id, logprob: a.logprob })),
  };
}

/** Every variable of a turn; `revealed` limits the tokens to those stepped through so far. */
export function turnScope(turn: DebugTurn, revealed = turn.tokens.length): Record<string, Value> {
  const tokens = turn.tokens.slice(0, revealed);
  const sum = (values: number[]) => values.reduce((a, b) => a + b, 0);
  const ratios = tokens.map((t) => t.ratio).filter((r): r is number => r !== null);
  const replay = turn.replay;
  return {
    turn: turn.index,
    observation: turn.observation,
    prompt: turn.prompt,
    prompt_no_tips: turn.promptNoTips,
    tips: turn.tips.map((t) => ({ id: t.id, text: t.text, similarity: t.similarity, score: t.score })),
    tips_retrieved: turn.tips.length,
    action: turn.action,
    executed_action: turn.executedAction,
    corrected: turn.corrected,
    forced: turn.forced,
    executed: turn.executed,
    reward: turn.reward,
    score: turn.score,
    score_changed: turn.scoreChanged,
    intrinsic: turn.intrinsic,
    done: turn.done,
    success: turn.success,
    failed: turn.done && !turn.success,
    next_observation: turn.nextObservation ?? null,
    tokens: tokens.map(tokenValue),
    min_logprob: tokens.length ? Math.min(...tokens.map((t) => t.logprob)) : null,
    logprob: sum(tokens.map((t) => t.logprob)),
    logprob_no_tips: sum(tokens.map((t) => t.logprobNoTips)),
    greedy_differs: turn.greedyDiffers ?? false,
    differs: replay?.differs ?? false,
    recorded_action: replay?.recordedAction ?? null,
    logprob_error: replay?.maxLogprobError ?? null,
    advantage: replay?.advantage ?? null,
    update_mode: replay?.updateMode ?? null,
    ratio_max: ratios.length ? Math.max(...ratios) : null,
    ratio_min: ratios.length ? Math.min(...ratios) : null,
    masked_tokens: tokens.filter((t) => t.masked === true).length,
  };
}

/** The scope of a token frame: the turn's names plus `token`, `j` and the token's own fields. */
export function tokenScope(turn: DebugTurn, j: number): Record<string, Value> {
  const token = turn.tokens[j];
  const scope = turnScope(turn, j + 1);
  return token ? { ...scope, j, token: tokenValue(token) } : scope;
}
