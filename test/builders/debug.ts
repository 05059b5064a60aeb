import type { DebugSession, DebugTurn, DebugTurnResult } from '../../src/rpc/debugProtocol';

// Test-data builders for the debug.* protocol types: every field defaulted to what a host sends.

export function aDebugSession(overrides: Partial<DebugSession> = {}): DebugSession {
  return {
    sessionId: 'd1-0a1b2c',
    memoryRunId: 'run-1',
    task: 'power-device',
    variation: 0,
    seed: 3,
    mode: 'memory',
    temperature: 1,
    policy: '/home/ada/project/.empo2/runs/run-1/checkpoints/iter-000002/model',
    checkpoint: 2,
    device: 'cpu',
    description: 'turn on the lamp .',
    maxActionTokens: 6,
    maxSteps: 5,
    replay: null,
    alongsideTraining: false,
    ...overrides,
  };
}

export function aDebugTurn(overrides: Partial<DebugTurn> = {}): DebugTurn {
  return {
    index: 0,
    observation: 'you are in the hallway .',
    prompt: 'task : turn on the lamp . now : you are in the hallway . <tip> go to shed ; action : go to shed </tip>',
    promptNoTips: 'task : turn on the lamp . now : you are in the hallway .',
    tips: [{ id: 'p000001', text: 'go to shed ; action : go to shed', similarity: 0.81, score: 100 }],
    action: 'go to shed',
    executedAction: 'go to shed',
    corrected: false,
    forced: false,
    executed: true,
    tokens: [
      {
        index: 0,
        id: 40,
        text: 'go',
        logprob: -0.1,
        logprobNoTips: -0.4,
        alternatives: [
          { id: 40, text: 'go', logprob: -0.1 },
          { id: 41, text: 'look', logprob: -2.5 },
        ],
        ratio: null,
        masked: null,
      },
    ],
    minLogprob: -0.1,
    greedyDiffers: false,
    reward: 0,
    score: 0,
    intrinsic: 1,
    scoreChanged: false,
    nextObservation: 'you are in the shed .',
    done: false,
    success: false,
    replay: null,
    ...overrides,
  };
}

export function aDebugTurnResult(turn: Partial<DebugTurn> = {}): DebugTurnResult {
  return {
    turn: aDebugTurn(turn),
    executed: true,
    revealed: 1,
    episode: {
      turns: 1,
      done: false,
      success: false,
      score: 0,
      observation: 'you are in the shed .',
      firstObservation: 'you are in the hallway .',
      replaying: false,
    },
  };
}
