// Builds the extension and its webviews.
//   node esbuild.mjs               one development build (with source maps)
//   node esbuild.mjs --production  minified, no source maps (vsce package runs this)
//   node esbuild.mjs --watch       rebuild on change
//
// src/extension.ts          -> out/extension.js        (CommonJS for the Node extension host)
// webview/<name>/index.ts   -> out/webview/<name>.js   (ES module for the webview's browser;
//                                                      lit and @vscode-elements bundled in)
import * as esbuild from 'esbuild';
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';

const production = process.argv.includes('--production');
const watch = process.argv.includes('--watch');

const webviewEntries = readdirSync('webview', { withFileTypes: true })
  .filter((entry) => entry.isDirectory() && entry.name !== 'common')
  .map((entry) => path.join('webview', entry.name, 'index.ts'))
  .filter((file) => existsSync(file));

/** Prints errors the way VS Code's $esbuild-watch problem matcher reads them. */
const problemMatcherLog = {
  name: 'problem-matcher-log',
  setup(build) {
    build.onStart(() => console.log('[watch] build started'));
    build.onEnd((result) => {
      for (const { text, location } of result.errors) {
        console.error(`✘ [ERROR] ${text}`);
        if (location) {
          console.error(`    ${location.file}:${location.line}:${location.column}:`);
        }
      }
      console.log('[watch] build finished');
    });
  },
};

const common = {
  bundle: true,
  minify: production,
  sourcemap: production ? false : 'linked',
  sourcesContent: false,
  logLevel: 'warning',
  plugins: watch ? [problemMatcherLog] : [],
};

const builds = [
  {
    ...common,
    entryPoints: ['src/extension.ts'],
    outfile: 'out/extension.js',
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    tsconfig: 'tsconfig.json',
    // ws loads these native speed-ups only when installed; never bundle them.
    external: ['vscode', 'bufferutil', 'utf-8-validate'],
  },
  {
    ...common,
    entryPoints: Object.fromEntries(webviewEntries.map((file) => [path.basename(path.dirname(file)), file])),
    outdir: 'out/webview',
    platform: 'browser',
    format: 'esm',
    target: 'es2022',
    tsconfig: 'webview/tsconfig.json',
    // CSS a webview imports (uPlot's) becomes a string that lit adopts into a shadow root: no
    // extra <link>, and nothing the page's Content Security Policy would have to allow.
    loader: { '.css': 'text' },
  },
];

if (watch) {
  const contexts = await Promise.all(builds.map((options) => esbuild.context(options)));
  await Promise.all(contexts.map((context) => context.watch()));
} else {
  const started = Date.now();
  await Promise.all(builds.map((options) => esbuild.build(options)));
  console.log(`built out/extension.js and ${webviewEntries.length} webview(s) in ${Date.now() - started} ms`);
}
