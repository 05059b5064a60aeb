import * as assert from 'node:assert/strict';
import { echoedEdit } from '../../webview/common/nativeTextEditing';

// The keys VS Code's webview host echoes back to the page late (select all, undo, redo) are the
// ones a text field keeps for the browser; every other key still reaches VS Code.

const key = (k: string, mods: Partial<Record<'ctrlKey' | 'metaKey' | 'altKey' | 'shiftKey', boolean>> = {}) => ({
  key: k,
  ctrlKey: false,
  metaKey: false,
  altKey: false,
  shiftKey: false,
  ...mods,
});

describe('echoedEdit', () => {
  it('names select all, undo and redo with Ctrl or Cmd, in either case', () => {
    assert.equal(echoedEdit(key('a', { ctrlKey: true })), 'selectAll');
    assert.equal(echoedEdit(key('A', { metaKey: true })), 'selectAll');
    assert.equal(echoedEdit(key('z', { ctrlKey: true })), 'undo');
    assert.equal(echoedEdit(key('Z', { ctrlKey: true, shiftKey: true })), 'redo');
    assert.equal(echoedEdit(key('y', { ctrlKey: true })), 'redo');
  });

  it('leaves every other key to VS Code: plain letters, Ctrl+S, Ctrl+Enter, Alt chords, Ctrl+Shift+A', () => {
    assert.equal(echoedEdit(key('a')), undefined);
    assert.equal(echoedEdit(key('s', { ctrlKey: true })), undefined);
    assert.equal(echoedEdit(key('Enter', { ctrlKey: true })), undefined);
    assert.equal(echoedEdit(key('a', { ctrlKey: true, altKey: true })), undefined);
    assert.equal(echoedEdit(key('a', { ctrlKey: true, shiftKey: true })), undefined);
    assert.equal(echoedEdit(key('F1')), undefined);
  });
});
