import { readdirSync } from 'node:fs';
import * as path from 'node:path';
import Mocha = require('mocha');
import SummaryReporter = require('../harness/summaryReporter');

// Entry of the integration suite, loaded by VS Code's extension host as extensionTestsPath:
// inside code-server here (test/harness/runIntegration.mjs), or in a downloaded VS Code with
// @vscode/test-electron (test/harness/runElectron.mjs). VS Code calls run() and turns a rejection
// into exit code 1.

export function run(): Promise<void> {
  const mocha = new Mocha({
    ui: 'bdd',
    color: false,
    timeout: 30_000,
    reporter: SummaryReporter,
    grep: process.env.EMPO2_TEST_GREP,
  });
  for (const file of readdirSync(__dirname)
    .filter((name) => name.endsWith('.integration.test.js'))
    .sort()) {
    mocha.addFile(path.join(__dirname, file));
  }
  return new Promise((resolve, reject) => {
    mocha.run((failures) => (failures > 0 ? reject(new Error(`${failures} integration test(s) failed`)) : resolve()));
  });
}
