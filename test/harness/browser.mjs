// Debian's Chromium driven by playwright-core (no browser download): headless, no sandbox
// (we run as root), nothing that phones home, a fresh profile for each launch.
import { chromium } from 'playwright-core';
import { vscodeTools } from './paths.mjs';

export const VIEWPORT = { width: 1440, height: 900 };

export async function launchBrowser() {
  const browser = await chromium.launch({
    executablePath: vscodeTools.chromium,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
  const context = await browser.newContext({ viewport: VIEWPORT, deviceScaleFactor: 1 });
  const page = await context.newPage();
  return { browser, context, page };
}
