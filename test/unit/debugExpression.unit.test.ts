import * as assert from 'node:assert/strict';
import { fixed, formatReturn } from '../../src/common/quantities';
import { evaluate, Expression, ExpressionError, show } from '../../src/debug/expression';
import { tickLabels } from '../../webview/metrics/metrics-chart/chartMath';
import type { Value } from '../../src/debug/expression';
import { TIP_VARIABLE_CONTEXT, tipIdOfVariable, tipSummary } from '../../src/debug/tipVariables';
import { VariableValues } from '../../src/debug/variableValues';
import { bucketOf, tokenTable } from '../../src/debug/tokenTable';
import { turnScope } from '../../src/debug/turnScope';
import type { DebugTurn } from '../../src/rpc/debugProtocol';

// The breakpoint/watch language: conditions over a turn's variables, Python and JS spellings,
// and that nothing outside the turn's variables can be reached.

function turn(overrides: Partial<DebugTurn> = {}): DebugTurn {
  return {
    index: 3,
    observation: 'you are in the shed . a crate is here .',
    prompt: 'p <tip> x </tip>',
    promptNoTips: 'p',
    tips: [{ id: 'p000001', text: 'open the crate', similarity: 0.8, score: 100 }],
    action: 'open crate',
    executedAction: 'open crate',
    corrected: false,
    forced: false,
    executed: true,
    tokens: [
      {
        index: 0,
        id: 10,
        text: 'open',
        logprob: -0.2,
        logprobNoTips: -3.1,
        alternatives: [{ id: 10, text: 'open', logprob: -0.2 }],
        ratio: null,
        masked: null,
      },
      {
        index: 1,
        id: 11,
        text: 'crate',
        logprob: -6.5,
        logprobNoTips: -7.0,
        alternatives: [{ id: 12, text: 'box', logprob: -0.1 }],
        ratio: 1.2,
        masked: true,
      },
    ],
    minLogprob: -6.5,
    reward: 25,
    score: 25,
    intrinsic: 1,
    scoreChanged: true,
    done: false,
    success: false,
    replay: null,
    ...overrides,
  };
}

describe('debug expressions', () => {
  const scope = turnScope(turn());

  it("evaluates conditions on a turn's reward, action, log-probs and score", () => {
    assert.equal(evaluate('reward > 0', scope), true);
    assert.equal(evaluate("'open' in action", scope), true);
    assert.equal(evaluate("'close' in action", scope), false);
    assert.equal(evaluate('min_logprob < -5', scope), true);
    assert.equal(evaluate('tips_retrieved == 0', scope), false);
    assert.equal(evaluate('score_changed', scope), true);
    assert.equal(evaluate('masked_tokens', scope), 1);
  });

  it('reads Python and JavaScript spellings, members, indexes and a few functions', () => {
    assert.equal(evaluate('reward > 0 and not corrected', scope), true);
    assert.equal(evaluate('reward > 0 && !corrected', scope), true);
    assert.equal(evaluate('forced or done || False', scope), false);
    assert.equal(evaluate("'crate' not in observation", scope), false);
    assert.equal(evaluate('tokens[1].logprob - tokens[1].logprob_no_tips', scope), 0.5);
    assert.equal(evaluate('tips[0].score == 100 and tips[-1].similarity >= 0.5', scope), true);
    assert.equal(evaluate('len(tokens) * 2 + -1', scope), 3);
    assert.equal(evaluate('min(-1, 2, -3)', scope), -3);
    assert.equal(evaluate('(1 + 2) * 3 == 9', scope), true);
    assert.equal(evaluate('"a" + action', scope), 'aopen crate');
  });

  it('refuses anything outside the turn: unknown names, functions, prototype members, syntax', () => {
    assert.throws(() => evaluate('process', scope), /'process' is not defined/);
    assert.throws(() => evaluate('require("fs")', scope), /unknown function 'require'/);
    assert.throws(() => evaluate('constructor("return process")', scope), /unknown function 'constructor'/);
    assert.throws(() => evaluate('toString', scope), /'toString' is not defined/);
    assert.equal(evaluate('action.constructor', scope), null);
    assert.equal(evaluate('tips.__proto__', scope), null);
    assert.throws(() => new Expression('reward >'), ExpressionError);
    assert.throws(() => new Expression('reward = 1'), /unexpected '='/);
    assert.throws(() => new Expression("'open"), /unterminated string/);
    assert.throws(() => new Expression('x'.repeat(2000)), /at most 1000/);
  });
});

describe("the token view's table", () => {
  it('puts each token on a line with both log-probs coloured by bucket, ratio and mask', () => {
    const { text, cells } = tokenTable(turn());
    const lines = text.trimEnd().split('\n');
    assert.equal(lines.length, 4);
    assert.match(lines[2], /^"open"\s+-0\.200\s+-3\.100\s+—\s+—\s+open -0\.20/);
    assert.match(lines[3], /^"crate"\s+-6\.500\s+-7\.000\s+1\.200\s+masked\s+box -0\.10/);
    assert.deepEqual(
      cells.map((c) => [c.line, c.bucket]),
      [
        [2, 0],
        [2, 2],
        [3, 3],
        [3, 3],
      ],
    );
    assert.equal(lines[2].slice(cells[0].start, cells[0].end).trim(), '-0.200');
    assert.deepEqual([bucketOf(0), bucketOf(-1), bucketOf(-4.9), bucketOf(-5.1)], [0, 1, 2, 3]);
  });
});

describe('a retrieved tip in the Variables view', () => {
  it('reads "<id>: <text>", from which "Show Tip in Memory Tips" takes the id back', () => {
    const tip = turnScope(turn()).tips as Array<{ [key: string]: Value }>;
    const value = tipSummary(tip[0])!;
    assert.equal(value, 'p000001: open the crate');
    assert.equal(tipIdOfVariable(value), 'p000001');
    assert.equal(
      tipIdOfVariable(tipSummary({ id: 't000004', text: 'note: the key opens it' })!),
      't000004',
      'a colon in the text',
    );
    assert.equal(tipSummary({ similarity: 0.5 }), undefined, 'not a tip');
    assert.equal(tipIdOfVariable('[3]'), undefined);
  });

  it('carries the menu context that offers "Show Tip in Memory Tips", and only on a tip', () => {
    const values = new VariableValues();
    const [tips, action] = values.children(values.handle({ tips: turnScope(turn()).tips, action: 'open crate' }));
    assert.equal(tips.value, '[1 item]');
    const [tip] = values.children(tips.variablesReference) as Array<{
      value: string;
      __vscodeVariableMenuContext?: string;
    }>;
    assert.equal(tip.value, 'p000001: open the crate');
    assert.equal(tip.__vscodeVariableMenuContext, TIP_VARIABLE_CONTEXT);
    assert.equal((action as { __vscodeVariableMenuContext?: string }).__vscodeVariableMenuContext, undefined);
    assert.equal((tips as { __vscodeVariableMenuContext?: string }).__vscodeVariableMenuContext, undefined);
    const [none] = values.children(values.handle({ tips: [] }));
    assert.equal(none.value, '[]', 'no tips reads as an empty list, not "[0]"');
    assert.equal(none.variablesReference, 0);
  });
});

describe('numbers that round to zero', () => {
  it('read "0", never "-0", in the Variables view, the charts and the views', () => {
    assert.equal(show(-0.00001), '0');
    assert.equal(show(-0), '0');
    assert.equal(show(-0.25), '-0.25');
    assert.equal(fixed(-0.004, 2), '0.00');
    assert.equal(fixed(-0.4, 0), '0');
    assert.equal(fixed(-0.006, 2), '-0.01');
    assert.equal(formatReturn(-0.001), '0.00');
    // uPlot's splits near zero come as -2.7e-17 after floating-point steps.
    assert.deepEqual(tickLabels([-2.7e-17, 0.1, 0.2], 0.1), ['0.0', '0.1', '0.2']);
  });
});
