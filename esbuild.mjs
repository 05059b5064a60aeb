// Builds the extension and its webviews.
//   node esbuild.mjs               one development build (with source maps)
//   node esbuild.mjs --production  minified, no source maps (vsce package runs this)
//   node esbuild.mjs --watch       rebuild on change
//
// src/extension.ts          -> out/extension.js        (CommonJS for the Node extension host)
// onnxruntime-node (native)  -> out/node_modules/       (this platform's binary only; see below)
// webview/<name>/index.ts   -> out/webview/<name>.js   (ES module for the webview's browser;
//                                                      lit and @vscode-elements bundled in)
import * as esbuild from 'esbuild';
import { cpSync, existsSync, readdirSync, rmSync } from 'node:fs';
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
    // ws loads these native speed-ups only when installed; never bundle them. onnxruntime-node
    // is a native addon: required at run time from out/node_modules (copyOnnxRuntime).
    external: ['vscode', 'bufferutil', 'utf-8-validate', 'onnxruntime-node'],
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

/**
 * Local scoring (src/scoring/) requires onnxruntime-node, a native addon esbuild cannot bundle,
 * and the .vsix ships no node_modules (`vsce package --no-dependencies`). So its JavaScript and
 * this platform's binaries go into out/node_modules, where Node finds them from out/extension.js,
 * in the extension host of a checkout and of an installed .vsix alike. The other platforms'
 * binaries (some 250 MB) stay out: a .vsix built here runs local scoring on this platform only
 * (build one per platform with `vsce package --target`).
 */
function copyOnnxRuntime() {
  const target = 'out/node_modules';
  rmSync(target, { recursive: true, force: true });
  const binaries = `bin/napi-v6/${process.platform}/${process.arch}`;
  const packages = {
    'onnxruntime-node': ['package.json', 'dist', binaries],
    'onnxruntime-common': ['package.json', 'dist/cjs'],
  };
  for (const [name, parts] of Object.entries(packages)) {
    for (const part of parts) {
      const from = path.join('node_modules', name, part);
      if (existsSync(from)) {
        cpSync(from, path.join(target, name, part), {
          recursive: true,
          filter: (file) => !file.endsWith('.map') && !file.endsWith('.d.ts'),
        });
      }
    }
  }
}

copyOnnxRuntime();

if (watch) {
  const contexts = await Promise.all(builds.map((options) => esbuild.context(options)));
  await Promise.all(contexts.map((context) => context.watch()));
} else {
  const started = Date.now();
  await Promise.all(builds.map((options) => esbuild.build(options)));
  console.log(`built out/extension.js and ${webviewEntries.length} webview(s) in ${Date.now() - started} ms`);
}
