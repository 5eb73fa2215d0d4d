import { defineConfig } from 'vitest/config';

/**
 * postgres.js can throw, from a timer of its own, a TypeError writing to a connection that is already closed
 * (porsager/postgres#1208) when a test stops or kills the database under an in-process service. The service process
 * recovers from exactly that fault (src/store/faults.ts, installed by src/main.ts); a test runner has no such guard,
 * so the same fault, and nothing else, is not counted as an error of the run.
 */
function isDriverSocketFault(err: { name?: string; message?: string; stack?: string }): boolean {
  return (
    err.name === 'TypeError' &&
    err.message === "Cannot read properties of null (reading 'write')" &&
    /\bnextWrite\b/.test(err.stack ?? '') &&
    /postgres[\\/]src[\\/]connection\.js/.test(err.stack ?? '')
  );
}

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // once per run: the migrated template database test databases are copied from, and the run's shared service build
    globalSetup: ['test/helpers/global-setup.ts'],
    // Generous: a timeout here only catches a hang. Tests do real work against real servers, and on a loaded machine
    // (a 2-core laptop also running another suite) that work takes several times as long; speed is measured in load/.
    testTimeout: 300_000,
    hookTimeout: 600_000,
    pool: 'forks',
    fileParallelism: true,
    maxWorkers: 2,
    onUnhandledError: (err) => !isDriverSocketFault(err),
  },
});
