import { defineConfig } from 'vitest/config';

/** The whole suite runs twice: on the machine's PostgreSQL and on the embedded PostgreSQL (PGlite). */
export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Node.js 24 and the system packages, checked before any test runs.
    globalSetup: ['test/global-setup.ts'],
    // Most of a file's time is spent waiting (on PostgreSQL, child processes, the browser, timers), so more files
    // than cores run at once; vitest's default (cores - 1) would run one at a time on a 2-core machine.
    maxWorkers: 4,
    reporters: ['default', './test/file-times-reporter.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    projects: [
      { extends: true, test: { name: 'postgres', env: { TEST_DATABASE: 'postgres' } } },
      { extends: true, test: { name: 'embedded', env: { TEST_DATABASE: 'embedded' } } },
    ],
  },
});
