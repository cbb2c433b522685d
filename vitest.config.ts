import { defineConfig } from 'vitest/config';
import Sequencer from './test/sequencer.ts';

/**
 * Files that need a process of their own: one loads the Lambda module again under another
 * environment, one takes a heap snapshot of its own process, two listen for the process's uncaught
 * errors, and two count what the whole process holds (the table stores' open iterators, the cluster
 * connection pools), which only their own tests may move.
 */
const OWN_PROCESS = [
  'functions/lambda.test.ts',
  'agent/observability/profiling.test.ts',
  'shared/table/core/embedded.test.ts',
  'agent/clusters/clusters.test.ts',
  'shared/table/core/dynalite-store.test.ts',
  'agent/clusters/shared-agents.test.ts',
];
const NEVER = ['**/node_modules/**'];

// Tests run real servers on loopback (dynalite, gRPC, HTTP); two cores are the budget,
// so files run in a small pool and each test gets room for real I/O.
export default defineConfig({
  test: {
    pool: 'forks',
    maxWorkers: 2,
    testTimeout: 30_000,
    hookTimeout: 60_000,
    reporters: ['default', './test/summary-reporter.ts'],
    // Without durations from an earlier run, the suites of test/ and bench/ first (test/sequencer.ts).
    sequence: { sequencer: Sequencer },
    // Each file gets back the environment the worker had before it (test/setup/environment.ts), and
    // fails if it leaves a worker thread or message port open (test/setup/threads.ts).
    setupFiles: ['./test/setup/environment.ts', './test/setup/threads.ts'],
    projects: [
      {
        extends: true,
        // Every other file runs in a worker that keeps its loaded modules from one file to the next:
        // loading the project's modules and their packages again for each of 300 files was a fifth of
        // the suite's time on two cores (docs/testing.md#how-the-files-run).
        test: { name: 'shared-process', include: ['{functions,driver,agent,cli,shared,test,bench,scripts}/**/*.test.ts'], exclude: [...NEVER, ...OWN_PROCESS], isolate: false },
      },
      { extends: true, test: { name: 'own-process', include: OWN_PROCESS, exclude: NEVER, isolate: true } },
    ],
  },
});
