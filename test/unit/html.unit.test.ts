import * as assert from 'node:assert/strict';
import { INITIAL_STATE_ELEMENT_ID } from '../../src/common/webviewConstants';
import {
  contentSecurityPolicy,
  createNonce,
  embedJson,
  renderWebviewHtml,
  webviewOptions,
} from '../../src/common/html';
import { aWebview, anExtensionUri } from '../builders/fakeWebview';

// The fake webview stands in for vscode.Webview, which exists only inside VS Code.

function cspOf(html: string): string {
  const match = /<meta http-equiv="Content-Security-Policy" content="([^"]*)">/.exec(html);
  assert.ok(match, 'the page has a CSP meta tag');
  return match[1].replace(/&#39;|&apos;/g, "'");
}

function shell(initialState: unknown = { hostState: 'stopped' }) {
  return { entry: 'tips', title: 'Memory Tips', initialState };
}

describe('webview HTML shell', () => {
  it("denies everything by default and allows scripts only with this page's nonce", () => {
    const webview = aWebview({ cspSource: 'https://resources.test' });
    const html = renderWebviewHtml(webview, anExtensionUri(), shell(), 'NONCE123');
    const directives = cspOf(html)
      .split(';')
      .map((d) => d.trim());

    assert.equal(directives[0], "default-src 'none'");
    assert.ok(directives.includes("script-src 'nonce-NONCE123'"));
    assert.ok(directives.includes('style-src https://resources.test'));
    assert.ok(!cspOf(html).includes('unsafe-inline'), 'no unsafe-inline anywhere');
    assert.ok(!cspOf(html).includes('unsafe-eval'), 'no unsafe-eval anywhere');
  });

  it('gives every executable script the nonce', () => {
    const html = renderWebviewHtml(aWebview(), anExtensionUri(), shell(), 'NONCE123');
    const scripts = [...html.matchAll(/<script\b([^>]*)>/g)].map((m) => m[1]);
    const executable = scripts.filter((attributes) => !attributes.includes('type="application/json"'));
    assert.equal(executable.length, 1);
    assert.match(executable[0], /nonce="NONCE123"/);
  });

  it('loads the bundle and the stylesheet through asWebviewUri', () => {
    const webview = aWebview({ resourceAuthority: 'resources.test' });
    const html = renderWebviewHtml(webview, anExtensionUri('/ext'), shell(), 'n');
    assert.deepEqual(webview.asWebviewUriCalls, ['/ext/out/webview/tips.js', '/ext/media/webview.css']);
    assert.match(html, /src="https:\/\/resources\.test\/ext\/out\/webview\/tips\.js"/);
    assert.match(html, /href="https:\/\/resources\.test\/ext\/media\/webview\.css"/);
    assert.ok(!html.includes('file://'), 'no raw file URL reaches the page');
  });

  it('limits local resources to the built webviews and media', () => {
    const options = webviewOptions(anExtensionUri('/ext'));
    assert.equal(options.enableScripts, true);
    assert.deepEqual(
      options.localResourceRoots?.map((uri) => uri.path),
      ['/ext/out/webview', '/ext/media'],
    );
  });

  it('embeds the initial state so first paint needs no message', () => {
    const html = renderWebviewHtml(aWebview(), anExtensionUri(), shell({ hostState: 'running' }), 'n');
    const match = new RegExp(`<script type="application/json" id="${INITIAL_STATE_ELEMENT_ID}">(.*?)</script>`).exec(
      html,
    );
    assert.ok(match);
    assert.deepEqual(JSON.parse(match[1]), { hostState: 'running' });
  });

  it('cannot be broken out of by the state it embeds', () => {
    const hostile = { tip: '</script><script>alert(1)</script>' };
    const embedded = embedJson(hostile);
    assert.ok(!embedded.includes('<'));
    assert.deepEqual(JSON.parse(embedded), hostile);
  });

  it('escapes the title', () => {
    const html = renderWebviewHtml(aWebview(), anExtensionUri(), { ...shell(), title: '<b>Tips & more</b>' }, 'n');
    assert.match(html, /<title>&lt;b&gt;Tips &amp; more&lt;\/b&gt;<\/title>/);
  });

  it('makes a fresh, unguessable nonce each time', () => {
    const nonces = new Set(Array.from({ length: 100 }, () => createNonce()));
    assert.equal(nonces.size, 100);
    for (const nonce of nonces) {
      assert.ok(Buffer.from(nonce, 'base64').length >= 16, '128 bits or more');
    }
    assert.notEqual(
      cspOf(renderWebviewHtml(aWebview(), anExtensionUri(), shell())),
      cspOf(renderWebviewHtml(aWebview(), anExtensionUri(), shell())),
    );
  });

  it('lists exactly the directives it needs', () => {
    assert.equal(
      contentSecurityPolicy('https://r.test', 'N'),
      "default-src 'none'; img-src https://r.test data:; font-src https://r.test; style-src https://r.test; script-src 'nonce-N'",
    );
  });
});
