import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Prepares once per run the stores and the data directory tests copy instead of building their own.
    globalSetup: ['test/support/global-setup.ts'],
    // Ceilings, not expectations: every wait is for an event (a ready line, a response), so a
    // passing test never waits for them. End-to-end tests start real servers (a first start
    // with the starter corpus takes ~8 s idle); with a second copy of the suite and other jobs
    // on two cores (load 8-10) they run five times slower, so the ceilings are far above that.
    testTimeout: 240_000,
    hookTimeout: 300_000,
    pool: 'forks',
    // Two cores here and in CI: more workers only contend.
    maxWorkers: 2,
  },
});
