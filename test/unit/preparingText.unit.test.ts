import * as assert from 'node:assert/strict';
import { formatSecondsLeft, preparingPercent, preparingText, RateEstimate } from '../../src/runs/preparingText';

const building = (done: number, total = 3000) => ({ iteration: 0, phase: 'preparing' as const, done, total });

describe('the notification of a starting run', () => {
  it('says the policy loads until the host reports a build', () => {
    assert.equal(preparingText(null, undefined), 'loading the policy');
    assert.equal(preparingText({ iteration: 1, phase: 'rollout', done: 1, total: 9 }, 10), 'loading the policy');
    assert.equal(preparingPercent(null), 0);
  });

  it('names the build step of how many, and the time left once it is known', () => {
    assert.equal(preparingText(building(120), undefined), 'building the built-in policy (once): step 120 of 3000');
    assert.equal(
      preparingText(building(120), 250),
      'building the built-in policy (once): step 120 of 3000, about 4 min left',
    );
    assert.equal(preparingPercent(building(750)), 25);
  });

  it('estimates the time left from the rate since its first sample, over the whole build', () => {
    const rate = new RateEstimate();
    assert.equal(rate.secondsLeft(100, 3000, 0), undefined, 'one sample has no rate');
    assert.equal(rate.secondsLeft(100, 3000, 5_000), undefined, 'nothing moved yet');
    assert.equal(rate.secondsLeft(200, 3000, 10_000), 280); // 100 steps in 10 s, 2800 to go
    assert.equal(rate.secondsLeft(3000, 3000, 90_000), 0);
    assert.equal(rate.secondsLeft(10, 3000, 100_000), undefined, 'a new count starts a new estimate');
  });

  it('rounds an estimate as coarsely as it is known', () => {
    assert.equal(formatSecondsLeft(2), 'about 5 s');
    assert.equal(formatSecondsLeft(42), 'about 40 s');
    assert.equal(formatSecondsLeft(250), 'about 4 min');
    assert.equal(formatSecondsLeft(3900), 'about 1 h 5 min');
  });
});
