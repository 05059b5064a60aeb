import { MessageEndpoint, type MessagePort } from '../../src/common/messageEndpoint';
import { INITIAL_STATE_ELEMENT_ID } from '../../src/common/webviewConstants';
import { keepTextEditingNative } from './nativeTextEditing';

// The webview's end of the extension channel, and the only module that touches
// acquireVsCodeApi (which VS Code lets a page call once). Elements never post messages
// themselves: they fire typed DOM events and the page's index.ts forwards them through here.

interface VsCodeApi {
  postMessage(message: unknown): void;
  getState(): unknown;
  setState(state: unknown): void;
}

declare function acquireVsCodeApi(): VsCodeApi;

const vscodeApi = acquireVsCodeApi();

// Every page that talks to the extension has text fields or may grow them: what a person types
// there must not race VS Code's echo of select all and undo (nativeTextEditing.ts).
keepTextEditingNative(window);

/** Connects to the extension. Install handlers on the result, then call signalReady(). */
export function connectToExtension(): MessageEndpoint {
  const port: MessagePort = {
    postMessage: (message) => vscodeApi.postMessage(message),
    onMessage: (listener) => {
      const onMessage = (event: MessageEvent) => listener(event.data);
      window.addEventListener('message', onMessage);
      return { dispose: () => window.removeEventListener('message', onMessage) };
    },
  };
  // The extension listens before it sets the HTML, so this side never waits.
  return new MessageEndpoint(port, { awaitPeerReady: false });
}

/** The state the extension embedded in the HTML (see src/common/html.ts). */
export function readInitialState<T>(): T {
  const element = document.getElementById(INITIAL_STATE_ELEMENT_ID);
  return JSON.parse(element?.textContent ?? 'null') as T;
}

/** UI state VS Code keeps while the webview is hidden (scroll, filters, expanded rows). */
export const viewState = {
  get<T>(): T | undefined {
    return (vscodeApi.getState() as T | null) ?? undefined;
  },
  set<T>(state: T): void {
    vscodeApi.setState(state);
  },
};
