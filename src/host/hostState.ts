import { Disposable } from '../common/lifecycle';
import { Emitter } from '../common/event';

/**
 * Where the training host is in its life; the status bar, views and context keys follow it.
 * `reconnecting`: the connection dropped and the extension is dialling again (with backoff)
 * while the host process (or the remote host) may still be up.
 */
export type HostState = 'stopped' | 'starting' | 'running' | 'reconnecting' | 'stopping' | 'crashed';

export class HostStateModel extends Disposable {
  private _state: HostState = 'stopped';
  private readonly _onDidChange = this._register(new Emitter<HostState>());
  readonly onDidChange = this._onDidChange.event;

  get state(): HostState {
    return this._state;
  }

  set(state: HostState): void {
    if (state !== this._state) {
      this._state = state;
      this._onDidChange.fire(state);
    }
  }
}
