import type { HostState } from './hostState';

// A host that stops by itself: it exited cleanly while this window was using it, not through
// Stop Host (which passes through `stopping`). Ctrl-C in the terminal that launched VS Code, or a
// `kill` of the host process, does this; the run it trained is left `interrupted`. A crash
// (a non-zero exit) goes to `crashed` and is reported with its log instead.

export function stoppedByItself(previous: HostState, next: HostState): boolean {
  return next === 'stopped' && (previous === 'running' || previous === 'reconnecting');
}

export const HOST_STOPPED_MESSAGE =
  'EMPO²: the training host stopped by itself (Ctrl-C in its terminal, or its process was ended), so nothing here is live any more. ' +
  'A run it was training is interrupted at its last checkpoint; Start Host, then Resume Run, to go on.';
