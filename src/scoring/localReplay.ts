// Replay of a recorded episode without a host: the recorded actions re-scored teacher-forced by
// an ONNX export, turned into the debugger's own DebugTurn and DebugReplaySummary, so the token
// view shows them as it shows a host replay. The same numbers as the host's replay
// (host/empo2/debug/replay.py `score_recording`): per token the log-prob with tips and without,
// the top-5, the largest |re-scored − recorded| log-prob, whether greedy decoding would act
// differently, and the first turn where it would.
//
// What stays with the host: the GRPO advantage, the importance ratio and the low-probability mask
// are the update's maths (host/empo2/algo/losses.py), written once in Python; here they are null
// and the token view shows "—". No `vscode` import.

import type { DebugReplaySummary, DebugToken, DebugTurn } from '../rpc/debugProtocol';
import type { Episode } from '../rpc/protocol';
import { ScoringError, type OnnxPolicy, type ScoredRow } from './onnxPolicy';

export interface LocalReplay {
  readonly turns: DebugTurn[];
  readonly summary: DebugReplaySummary;
}

function tokensOf(
  policy: OnnxPolicy,
  actionIds: readonly number[],
  withTips: ScoredRow,
  noTips: ScoredRow,
): DebugToken[] {
  return actionIds.map((id, j) => ({
    index: j,
    id,
    text: policy.tokenText(id),
    logprob: withTips.logprobs[j],
    logprobNoTips: noTips.logprobs[j],
    alternatives: withTips.top[j].map((a) => ({ id: a.id, text: policy.tokenText(a.id), logprob: a.logprob })),
    ratio: null,
    masked: null,
  }));
}

/** Scores every turn of `episode` (a trajectories/iter-NNNNNN.jsonl record) at `temperature`. */
export async function replayLocally(
  policy: OnnxPolicy,
  episode: Episode,
  temperature: number,
  runId: string | null = null,
): Promise<LocalReplay> {
  const steps = episode.steps;
  steps.forEach((s, t) => {
    if (!s.prompt_ids || !s.prompt_ids_no_tips) {
      throw new ScoringError(
        `step ${t} of ${episode.id} has no prompt token ids (a record from before they were kept); replay it with a host.`,
      );
    }
  });
  const rows = steps.flatMap((s) => [
    { prompt: s.prompt_ids ?? [], response: s.action_ids },
    { prompt: s.prompt_ids_no_tips ?? [], response: s.action_ids },
  ]);
  const scored = await policy.score(
    rows.filter((r) => r.response.length > 0),
    temperature,
  );
  let next = 0;
  let firstDifferentTurn: number | null = null;
  let worst = 0;
  const turns = steps.map((s, t): DebugTurn => {
    const [withTips, noTips] =
      s.action_ids.length > 0
        ? [scored[next++], scored[next++]]
        : [
            { logprobs: [], top: [] },
            { logprobs: [], top: [] },
          ];
    const tokens = tokensOf(policy, s.action_ids, withTips, noTips);
    const recorded = (s.behaviour_logprobs ?? []).slice(0, tokens.length);
    const error = Math.max(0, ...recorded.map((b, j) => Math.abs(tokens[j].logprob - b)));
    worst = Math.max(worst, error);
    const firstToken = tokens.findIndex((tok) => tok.alternatives[0]?.id !== tok.id);
    const differs = firstToken !== -1;
    if (differs && firstDifferentTurn === null) {
      firstDifferentTurn = t;
    }
    const last = t === steps.length - 1;
    return {
      index: t,
      observation: s.observation,
      prompt: s.prompt,
      promptNoTips: s.prompt_no_tips,
      tips: s.tips.map((text, i) => ({ id: s.tip_ids[i] ?? '', text, similarity: null, score: null })),
      action: s.action,
      executedAction: s.executed_action ?? s.action,
      corrected: s.executed_action !== undefined && s.executed_action !== s.action,
      forced: false,
      executed: true,
      tokens,
      minLogprob: tokens.length ? Math.min(...tokens.map((tok) => tok.logprob)) : null,
      greedyDiffers: differs,
      reward: s.reward,
      score: s.score ?? null,
      intrinsic: s.intrinsic,
      scoreChanged: Boolean(s.reward),
      nextObservation: s.next_observation ?? null,
      done: last,
      success: last && Boolean(episode.success),
      replay: {
        recordedAction: s.action,
        recordedExecutedAction: s.executed_action,
        recordedLogprobs: recorded,
        maxLogprobError: error,
        differs,
        firstDifferentToken: differs ? firstToken : null,
        preferredToken: differs ? tokens[firstToken].alternatives[0].text : null,
        recordedReward: s.reward,
        recordedScore: s.score ?? null,
        recordedIntrinsic: s.intrinsic,
        recordedNextObservation: s.next_observation ?? null,
        observationMatches: null,
        advantage: null,
        updateMode: episode.update_mode ?? null,
      },
    };
  });
  const summary: DebugReplaySummary = {
    runId,
    episodeId: episode.id,
    iteration: episode.iteration,
    turns: steps.length,
    firstDifferentTurn,
    maxLogprobError: worst,
    advantage: null,
    updateMode: episode.update_mode ?? null,
  };
  return { turns, summary };
}
