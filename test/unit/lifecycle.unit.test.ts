import * as assert from 'node:assert/strict';
import { Disposable, disposeAll, toDisposable } from '../../src/common/lifecycle';
import { Emitter } from '../../src/common/event';

class Owner extends Disposable {
  own(dispose: () => void): void {
    this._register(toDisposable(dispose));
  }
}

describe('lifecycle', () => {
  it('disposes what was registered, newest first, once', () => {
    const order: string[] = [];
    const owner = new Owner();
    owner.own(() => order.push('first'));
    owner.own(() => order.push('second'));
    owner.dispose();
    owner.dispose();
    assert.deepEqual(order, ['second', 'first']);
  });

  it('disposes at once what is registered after disposal', () => {
    const owner = new Owner();
    owner.dispose();
    let disposed = false;
    owner.own(() => (disposed = true));
    assert.equal(disposed, true);
  });

  it('keeps disposing when one throws, then reports it', () => {
    const order: string[] = [];
    const items = [
      toDisposable(() => order.push('a')),
      toDisposable(() => {
        throw new Error('boom');
      }),
      toDisposable(() => order.push('c')),
    ];
    assert.throws(() => disposeAll(items), /boom/);
    assert.deepEqual(order, ['c', 'a']);
  });
});

describe('Emitter', () => {
  it('calls listeners until they unsubscribe', () => {
    const emitter = new Emitter<number>();
    const seen: number[] = [];
    const subscription = emitter.event((n) => seen.push(n));
    emitter.fire(1);
    subscription.dispose();
    emitter.fire(2);
    assert.deepEqual(seen, [1]);
  });

  it('lets a listener unsubscribe while being called', () => {
    const emitter = new Emitter<void>();
    let calls = 0;
    const subscription = emitter.event(() => {
      calls++;
      subscription.dispose();
    });
    emitter.event(() => calls++);
    emitter.fire();
    emitter.fire();
    assert.equal(calls, 3);
  });
});
