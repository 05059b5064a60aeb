import WebSocket from 'ws';
import { Emitter } from '../common/event';
import type { CloseInfo, Transport } from './client';
import { Keepalive, type KeepaliveOptions } from './keepalive';

// The client's end of the host's WebSocket, with the `ws` package. The token goes in the
// upgrade's Authorization header (host/empo2/server/transport/auth.py); no Origin header is sent, because
// the host refuses any request that carries one (that is how it keeps web pages out).

export interface WebSocketOptions {
  /** Give up on the upgrade after this many ms (default 10 s). */
  readonly openTimeoutMs?: number;
  /** Largest frame accepted from the host (default 256 MiB: a run's whole metrics history). */
  readonly maxPayloadBytes?: number;
  /** Ping the host and drop a link that goes silent (keepalive.ts); off when absent. */
  readonly keepalive?: KeepaliveOptions;
}

/** Why a connection could not be opened, in one sentence for a person. */
export class ConnectError extends Error {
  constructor(
    message: string,
    /** HTTP status of a refused upgrade (401 wrong token, 403 refused origin), if any. */
    readonly status?: number,
  ) {
    super(message);
    this.name = 'ConnectError';
  }
}

export function connectWebSocket(
  url: string,
  token: string | undefined,
  options: WebSocketOptions = {},
): Promise<Transport> {
  return new Promise((resolve, reject) => {
    let socket: WebSocket;
    try {
      socket = new WebSocket(url, {
        headers: token ? { Authorization: `Bearer ${token}` } : {},
        perMessageDeflate: false,
        handshakeTimeout: options.openTimeoutMs ?? 10_000,
        maxPayload: options.maxPayloadBytes ?? 256 * 1024 * 1024,
      });
    } catch (error) {
      reject(new ConnectError(`${url} is not a WebSocket URL (${error instanceof Error ? error.message : error})`));
      return;
    }
    const onOpenError = (error: Error) => {
      socket.removeAllListeners();
      socket.on('error', () => undefined);
      socket.terminate();
      reject(new ConnectError(`cannot connect to ${url}: ${error.message}`));
    };
    socket.once('unexpected-response', (_request, response) => {
      const status = response.statusCode ?? 0;
      socket.removeAllListeners();
      socket.on('error', () => undefined);
      socket.terminate();
      const why =
        status === 401
          ? 'the host refused the token'
          : status === 403
            ? 'the host refused the connection (it carried a browser Origin)'
            : `the host answered HTTP ${status}`;
      reject(new ConnectError(`cannot connect to ${url}: ${why}`, status));
    });
    socket.once('error', onOpenError);
    socket.once('open', () => {
      socket.off('error', onOpenError);
      resolve(new WebSocketTransport(socket, options.keepalive));
    });
  });
}

class WebSocketTransport implements Transport {
  private readonly _onMessage = new Emitter<string>();
  readonly onMessage = this._onMessage.event;
  private readonly _onClose = new Emitter<CloseInfo>();
  readonly onClose = this._onClose.event;
  private closed = false;
  private readonly keepalive: Keepalive | undefined;

  constructor(
    private readonly socket: WebSocket,
    keepalive?: KeepaliveOptions,
  ) {
    if (keepalive) {
      this.keepalive = new Keepalive(
        () => socket.ping(),
        (silentMs) => {
          // Report our reason first: the 'close' that terminate() causes says only 1006.
          this.fireClose({ code: 1006, reason: `no answer from the host for ${Math.round(silentMs / 1000)} s` });
          socket.terminate();
        },
        keepalive,
      );
      socket.on('pong', () => this.keepalive?.alive());
      this.keepalive.start();
    }
    socket.on('message', (data, isBinary) => {
      this.keepalive?.alive();
      if (!isBinary) {
        this._onMessage.fire(data.toString());
      }
    });
    // 'error' is always followed by 'close'; without a listener ws would throw it.
    socket.on('error', () => undefined);
    socket.on('close', (code, reason) => this.fireClose({ code, reason: reason.toString() || closeWords(code) }));
  }

  send(text: string): void {
    if (this.socket.readyState !== WebSocket.OPEN) {
      throw new Error('the connection to the host is closed');
    }
    this.socket.send(text);
  }

  close(code = 1000, reason = ''): void {
    if (this.socket.readyState === WebSocket.OPEN || this.socket.readyState === WebSocket.CONNECTING) {
      this.socket.close(code, reason.slice(0, 120));
      // A host that never answers the closing handshake must not keep the socket alive.
      setTimeout(() => this.socket.terminate(), 2_000).unref();
    }
  }

  dispose(): void {
    this.close(1000, 'disposed');
    this.fireClose({ code: 1000, reason: 'disposed' });
    this._onMessage.dispose();
    this._onClose.dispose();
  }

  private fireClose(info: CloseInfo): void {
    if (!this.closed) {
      this.closed = true;
      this.keepalive?.stop();
      this._onClose.fire(info);
    }
  }
}

/** A close without a reason, in words (1006: the TCP link broke without a closing handshake). */
function closeWords(code: number): string {
  switch (code) {
    case 1000:
      return 'closed';
    case 1001:
      return 'the host is shutting down';
    case 1006:
      return 'the link broke';
    default:
      return `code ${code}`;
  }
}
