// The uncertainty of a change in success rate, for the rerun comparison: a few episodes per side
// (eval_episodes, 8 by default) move a rate in steps of 12.5 points, so a change is shown with
// its episode counts and a 95% interval, and reads as a gain or a loss only when that interval
// excludes zero. No vscode import.
//
// The interval is Newcombe's hybrid score interval for a difference of two proportions (method
// 10 of Newcombe 1998), built from the two Wilson score intervals: it stays inside [-1, 1] and
// keeps its coverage at 0% and 100%, where the Wald interval collapses to a point. Before and
// after are played on the same seeds (paired), which this treats as independent samples; with
// the positive correlation of paired draws the true interval is narrower, so this one errs wide.

/** The normal quantile of a two-sided 95% interval. */
const Z95 = 1.959963984540054;

/** Wilson's score interval of a proportion `p` observed over `n` trials. */
export function wilsonInterval(p: number, n: number, z = Z95): [number, number] {
  const z2 = z * z;
  const centre = (p + z2 / (2 * n)) / (1 + z2 / n);
  const half = (z / (1 + z2 / n)) * Math.sqrt((p * (1 - p)) / n + z2 / (4 * n * n));
  return [Math.max(0, centre - half), Math.min(1, centre + half)];
}

/** Newcombe's 95% interval of `after − before`, each a rate over its own number of episodes. */
export function differenceInterval(before: number, nBefore: number, after: number, nAfter: number): [number, number] {
  const [l1, u1] = wilsonInterval(before, nBefore);
  const [l2, u2] = wilsonInterval(after, nAfter);
  const d = after - before;
  return [d - Math.sqrt((after - l2) ** 2 + (u1 - before) ** 2), d + Math.sqrt((u2 - after) ** 2 + (before - l1) ** 2)];
}

/** A gain or a loss only when the interval excludes zero; otherwise no direction is claimed. */
export function changeDirection(interval: readonly [number, number] | null): 'up' | 'down' | 'unclear' {
  if (!interval) {
    return 'unclear';
  }
  return interval[0] > 0 ? 'up' : interval[1] < 0 ? 'down' : 'unclear';
}
