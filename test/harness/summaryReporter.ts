import { appendFileSync, mkdirSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { format } from 'node:util';
import Mocha = require('mocha');

// Mocha's spec reporter, plus two files for the tier runner (test/harness/runTiers.mjs):
//   EMPO2_TEST_SUMMARY  JSON counts {passes, failures, pending, tests, duration} at the end;
//   EMPO2_TEST_LOG      a copy of everything the reporter prints. Inside code-server's extension
//                       host nobody reads stdout, so this file is how the results come back.

interface TestSummary {
  passes: number;
  failures: number;
  pending: number;
  tests: number;
  durationMs: number;
}

const { EVENT_RUN_END } = Mocha.Runner.constants;

class SummaryReporter extends Mocha.reporters.Spec {
  constructor(runner: Mocha.Runner, options?: Mocha.MochaOptions) {
    super(runner, options);
    const logFile = process.env.EMPO2_TEST_LOG;
    if (logFile) {
      teeConsoleLog(logFile);
    }
    runner.once(EVENT_RUN_END, () => {
      const summaryFile = process.env.EMPO2_TEST_SUMMARY;
      if (summaryFile) {
        const stats = this.stats;
        const summary: TestSummary = {
          passes: stats.passes,
          failures: stats.failures,
          pending: stats.pending,
          tests: stats.tests,
          durationMs: stats.duration ?? 0,
        };
        mkdirSync(path.dirname(summaryFile), { recursive: true });
        writeFileSync(summaryFile, JSON.stringify(summary));
      }
    });
  }
}

function teeConsoleLog(logFile: string): void {
  mkdirSync(path.dirname(logFile), { recursive: true });
  const base = Mocha.reporters.Base as unknown as { consoleLog: (...args: unknown[]) => void };
  const print = base.consoleLog;
  base.consoleLog = (...args: unknown[]) => {
    print(...args);
    appendFileSync(logFile, format(...args) + '\n');
  };
}

export = SummaryReporter;
