import { Emitter } from '../../src/common/event';
import type { CloseInfo, Transport } from '../../src/rpc/client';

/**
 * An in-memory Transport standing in for the host's WebSocket: records what the client sends,
 * and lets a test play the host (reply, notify, close). Delivery is synchronous.
 */
export class FakeTransport implements Transport {
  readonly sent: Array<Record<string, unknown>> = [];
  private readonly _onMessage = new Emitter<string>();
  readonly onMessage = this._onMessage.event;
  private readonly _onClose = new Emitter<CloseInfo>();
  readonly onClose = this._onClose.event;
  closed: CloseInfo | undefined;
  /** Called for each request the client sends (to answer it). */
  onSend: ((message: Record<string, unknown>) => void) | undefined;

  send(text: string): void {
    if (this.closed) {
      throw new Error('closed');
    }
    const message = JSON.parse(text) as Record<string, unknown>;
    this.sent.push(message);
    this.onSend?.(message);
  }

  /** The host sends a frame. */
  receive(message: unknown): void {
    this._onMessage.fire(typeof message === 'string' ? message : JSON.stringify(message));
  }

  reply(id: unknown, result: unknown): void {
    this.receive({ jsonrpc: '2.0', id, result });
  }

  fail(id: unknown, code: number, message: string, data?: unknown): void {
    this.receive({ jsonrpc: '2.0', id, error: { code, message, ...(data !== undefined ? { data } : {}) } });
  }

  notify(method: string, params: unknown): void {
    this.receive({ jsonrpc: '2.0', method, params });
  }

  /** The host (or the network) closes the connection. */
  drop(code = 1006, reason = 'connection lost'): void {
    if (!this.closed) {
      this.closed = { code, reason };
      this._onClose.fire(this.closed);
    }
  }

  close(code = 1000, reason = ''): void {
    this.drop(code, reason);
  }

  disposed = false;

  dispose(): void {
    this.disposed = true;
    this.drop(1000, 'disposed');
  }
}
