import * as assert from 'node:assert/strict';
import { shownTips } from '../../webview/episode/shownTips';

// Two consecutive steps of one episode as the host records them: the same tip, retrieved through
// two different entries of its episode, so the prompt's text differs while the id is the same.
const step = (action: string) => ({
  tips: [`open the shed first ; action : ${action}`, 'heat the food'],
  tip_ids: ['t000003', 't000007'],
  tip_texts: ['open the shed first', 'heat the food'],
  tip_actions: [action, ''],
});

describe('the tips of a step in the episode view', () => {
  it("one tip id shows one text in every step; the entry's action is shown apart", () => {
    const [first, second] = [shownTips(step('open door')), shownTips(step('go north'))];
    assert.equal(first[0].id, second[0].id);
    assert.equal(first[0].text, second[0].text, 'the same id, the same text');
    assert.deepEqual([first[0].action, second[0].action], ['open door', 'go north']);
    assert.equal(second[0].inPrompt, 'open the shed first ; action : go north', 'what the prompt showed is kept');
    assert.deepEqual(first[1], { id: 't000007', text: 'heat the food', action: '', inPrompt: 'heat the food' });
  });

  it("a run recorded before the parts existed shows the prompt's text, as it was", () => {
    const { tip_texts: _texts, tip_actions: _actions, ...old } = step('open door');
    assert.deepEqual(
      shownTips(old).map((t) => [t.text, t.action]),
      [
        ['open the shed first ; action : open door', ''],
        ['heat the food', ''],
      ],
    );
  });
});
