// Disposal without a framework: anything that owns listeners, views or processes extends
// Disposable and hands what it creates to _register(), so one dispose() releases it all.
// Deliberately free of the vscode module so unit tests can load it in plain Node.

/** What VS Code calls a Disposable: anything with dispose(). */
export interface IDisposable {
  dispose(): void;
}

export function toDisposable(dispose: () => void): IDisposable {
  return { dispose };
}

/** Disposes each item once, in reverse order of registration; keeps going if one throws. */
export function disposeAll(disposables: IDisposable[]): void {
  const errors: unknown[] = [];
  while (disposables.length > 0) {
    try {
      disposables.pop()?.dispose();
    } catch (error) {
      errors.push(error);
    }
  }
  if (errors.length === 1) {
    throw errors[0];
  }
  if (errors.length > 1) {
    throw new AggregateError(errors, 'several disposables failed to dispose');
  }
}

export abstract class Disposable implements IDisposable {
  private _isDisposed = false;
  private readonly _disposables: IDisposable[] = [];

  protected get isDisposed(): boolean {
    return this._isDisposed;
  }

  /** Takes ownership of `value`: it is disposed with this object (at once if already disposed). */
  protected _register<T extends IDisposable>(value: T): T {
    if (this._isDisposed) {
      value.dispose();
    } else {
      this._disposables.push(value);
    }
    return value;
  }

  dispose(): void {
    if (this._isDisposed) {
      return;
    }
    this._isDisposed = true;
    disposeAll(this._disposables);
  }
}
