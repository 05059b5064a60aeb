import * as assert from 'node:assert/strict';
import { e2eSession } from './session';
import { Workbench } from './workbench';

// After every view has been used (tips, episode, metrics): each EMPO² webview runs under the
// locked-down shell (STYLE.md rule 5), and none of them tripped its Content Security Policy.

describe('EMPO² webviews, after a whole session', () => {
  const workbench = new Workbench();

  it('serve every page with a strict Content Security Policy', async () => {
    await workbench.openViewContainer('EMPO²');
    const policies: string[] = [];
    for (const frame of workbench.page.frames()) {
      const ours = await frame
        .locator('empo2-tips-panel, empo2-metrics-panel, empo2-episode-view')
        .count()
        .catch(() => 0);
      if (ours) {
        policies.push(
          await frame
            .locator('meta[http-equiv="Content-Security-Policy"]')
            .getAttribute('content')
            .then((c) => c ?? ''),
        );
      }
    }
    assert.ok(policies.length >= 2, `found ${policies.length} EMPO² webviews`);
    for (const policy of policies) {
      assert.match(policy, /default-src 'none'/);
      assert.match(policy, /script-src 'nonce-[A-Za-z0-9+/=]+'/);
      assert.doesNotMatch(policy, /unsafe-inline|unsafe-eval/);
    }
  });

  it('never broke that policy', () => {
    const violations = e2eSession().consoleMessages.filter((line) => /Content Security Policy|Refused to/i.test(line));
    assert.deepEqual(violations, []);
  });
});
