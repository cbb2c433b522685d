import { defineConfig } from 'vitest/config';

// Tests run real servers on loopback (dynalite, gRPC, HTTP); two cores are the budget,
// so files run in a small pool and each test gets room for real I/O.
export default defineConfig({
  test: {
    include: ['{functions,driver,agent,cli,shared,test,bench,scripts}/**/*.test.ts'],
    exclude: ['**/node_modules/**', 'test/cluster/**/*.real.test.ts'],
    pool: 'forks',
    maxWorkers: 2,
    testTimeout: 30_000,
    hookTimeout: 60_000,
    reporters: ['default', './test/summary-reporter.ts'],
  },
});
