import type { Page } from 'playwright-core';

/**
 * What test/harness/runE2e.mjs sets up before the end-to-end tests run: code-server with the
 * packaged extension installed, and a Chromium page showing its workbench.
 */
export interface E2ESession {
  readonly page: Page;
  readonly url: string;
  readonly workspace: string;
  readonly screenshotDir: string;
  /** Every console message of the page and its frames (webviews included), as "[type] text". */
  readonly consoleMessages: readonly string[];
  /** What test/harness/fixtures.mjs put in the workspace. */
  readonly fixtures: {
    readonly runRoot: string;
    readonly configFile: string;
    readonly bigRun: string;
    readonly bigEpisodes: number;
    readonly metricsRun: string;
    /** The project's Python (the host's interpreter; it runs tests' helpers too). */
    readonly python: string;
  };
  /** Numbers measured as a person would feel them; written to test-output/measurements-e2e.json. */
  readonly measurements: Record<string, number | string>;
}

export function e2eSession(): E2ESession {
  const session = (globalThis as { __empo2E2E?: E2ESession }).__empo2E2E;
  if (!session) {
    throw new Error('end-to-end tests run through test/harness/runE2e.mjs (npm run test:e2e)');
  }
  return session;
}
