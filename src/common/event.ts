import { IDisposable, toDisposable } from './lifecycle';

// A minimal event emitter shaped like vscode.Event, so models that fire events stay free of the
// vscode module (and so load in plain-Node unit tests). Views adapt it with no wrapper: a
// vscode.Event<T> and an Event<T> are called the same way.

export type Event<T> = (listener: (value: T) => void, thisArgs?: unknown, disposables?: IDisposable[]) => IDisposable;

export class Emitter<T> implements IDisposable {
  private listeners = new Set<(value: T) => void>();

  readonly event: Event<T> = (listener, thisArgs, disposables) => {
    const bound = (value: T) => listener.call(thisArgs, value);
    this.listeners.add(bound);
    const subscription = toDisposable(() => this.listeners.delete(bound));
    disposables?.push(subscription);
    return subscription;
  };

  fire(value: T): void {
    // Copy first: a listener may unsubscribe itself while we iterate.
    for (const listener of [...this.listeners]) {
      listener(value);
    }
  }

  dispose(): void {
    this.listeners.clear();
  }
}
