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
    // A worker runs file after file in one process: the modules, the build of their TypeScript and the embedded
    // database's WebAssembly are loaded once per worker instead of once per file. Each file still has its own
    // database and app; nothing in src/ or test/helpers keeps state at module level that one file could leave to another
    // (the one setting kept there, the scrypt cost of new password hashes, is set again before each file: test/each-file.ts).
    isolate: false,
    setupFiles: ['test/each-file.ts'],
    reporters: ['default', './test/file-times-reporter.ts'],
    testTimeout: 30_000,
    // expect.poll waits for what a user would wait for (a page after sign-in, a change reaching another instance);
    // vitest's 1 s default is shorter than that takes while the suite loads both cores.
    expect: { poll: { timeout: 15_000 } },
    hookTimeout: 60_000,
    projects: [
      { extends: true, test: { name: 'postgres', env: { TEST_DATABASE: 'postgres' } } },
      { extends: true, test: { name: 'embedded', env: { TEST_DATABASE: 'embedded' } } },
    ],
  },
});
