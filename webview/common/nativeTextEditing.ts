// Select all, undo and redo stay the browser's own in a webview's text fields.
//
// VS Code's webview host forwards every keydown to the workbench, which binds these shortcuts to
// commands that, for a focused webview, send the edit back to the page (`execCommand('selectAll')`,
// 'undo', 'redo'): a round trip that takes longer the busier the machine is. By then the browser
// has already done the edit, and a person may have typed on: a select all that arrives again
// after the first words of a new text selects them, and the next key replaces them (seen in the
// browser test that types a tip at full speed after Ctrl+A: the box kept "ch the shed first…" of
// "Search the shed first…", on a 2-core machine at load 8 or more); an undo that arrives late
// undoes what was typed meanwhile. While a text field has focus these keys stop at the page, so
// the browser's own edit runs at once and exactly once; everywhere else they go on to VS Code.

type EditKey = 'selectAll' | 'undo' | 'redo';

/** Which browser edit a keydown asks for, if it is one the webview host would echo back. */
export function echoedEdit(
  event: Pick<KeyboardEvent, 'key' | 'ctrlKey' | 'metaKey' | 'altKey' | 'shiftKey'>,
): EditKey | undefined {
  const primary = event.ctrlKey || event.metaKey;
  if (!primary || event.altKey) {
    return undefined;
  }
  const key = event.key.toLowerCase();
  if (key === 'a' && !event.shiftKey) {
    return 'selectAll';
  }
  if (key === 'z') {
    return event.shiftKey ? 'redo' : 'undo';
  }
  if (key === 'y' && !event.shiftKey) {
    return 'redo';
  }
  return undefined;
}

/** The element a person types into, looking through shadow roots (lit elements nest them). */
export function isTextField(target: EventTarget | undefined): boolean {
  if (!(target instanceof HTMLElement)) {
    return false;
  }
  if (target instanceof HTMLTextAreaElement) {
    return !target.readOnly && !target.disabled;
  }
  if (target instanceof HTMLInputElement) {
    return !target.readOnly && !target.disabled && TEXT_INPUT_TYPES.has(target.type);
  }
  return target.isContentEditable;
}

const TEXT_INPUT_TYPES = new Set(['text', 'search', 'url', 'email', 'tel', 'password', 'number']);

/** Installs the guard on a page's window; returns its removal. */
export function keepTextEditingNative(page: Window): () => void {
  const onKeydown = (event: KeyboardEvent) => {
    if (echoedEdit(event) && isTextField(event.composedPath()[0])) {
      // Not preventDefault: the browser's edit is the one that must run.
      event.stopImmediatePropagation();
    }
  };
  // Capture on the window runs before the webview host's listener, which listens on the same
  // window in the bubbling phase.
  page.addEventListener('keydown', onKeydown, { capture: true });
  return () => page.removeEventListener('keydown', onKeydown, { capture: true });
}
