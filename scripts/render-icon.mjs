// Renders media/empo2-icon.svg to media/empo2.png (the marketplace wants a PNG) with Debian's
// Chromium. Run it after changing the SVG: node scripts/render-icon.mjs
import { readFileSync } from 'node:fs';
import { chromium } from 'playwright-core';

const svg = readFileSync(new URL('../media/empo2-icon.svg', import.meta.url), 'utf8');
const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox', '--disable-gpu'] });
try {
  const page = await browser.newPage({ viewport: { width: 128, height: 128 } });
  await page.setContent(`<html><body style="margin:0;background:transparent">${svg}</body></html>`);
  await page
    .locator('svg')
    .screenshot({ path: new URL('../media/empo2.png', import.meta.url).pathname, omitBackground: true });
} finally {
  await browser.close();
}
