import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // End-to-end files start a real server (PGlite boots in ~2 s); give them room.
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: 'forks',
    // Two cores here and in CI: more workers only contend.
    maxWorkers: 2,
  },
});
