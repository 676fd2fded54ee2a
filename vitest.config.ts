import { defineConfig } from 'vitest/config';

/** The whole suite runs twice: on the machine's PostgreSQL and on the embedded PostgreSQL (PGlite). */
export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Node.js 24 and the system packages, checked before any test runs.
    globalSetup: ['test/global-setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    projects: [
      { extends: true, test: { name: 'postgres', env: { TEST_DATABASE: 'postgres' } } },
      { extends: true, test: { name: 'embedded', env: { TEST_DATABASE: 'embedded' } } },
    ],
  },
});
