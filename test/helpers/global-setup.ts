// vitest globalSetup: runs once per `vitest run`, in the main process, before any test file.
import { rmSync } from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import type { TestProject } from 'vitest/node';
import { ensureTemplate } from './db.js';
import { REPO_ROOT, sharedBuildMarkers } from './build.js';
import { dropOldFixtureTemplates } from './fixture-db.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Where this run's test files share one compiled service (test/helpers/build.ts); built on first use. */
    sharedBuildDir: string;
  }
}

export default async function setup(project: TestProject): Promise<() => void> {
  // The migrated template every test database is copied from, built before the workers start (else they queue on it).
  await ensureTemplate();
  // imported fixtures of code changed since (test/helpers/fixture-db.ts): each is named after the code it was built with
  await dropOldFixtureTemplates();
  const dir = path.join(REPO_ROOT, `.test-build-run-${process.pid}-${randomBytes(3).toString('hex')}`);
  project.provide('sharedBuildDir', dir);
  return () => {
    const m = sharedBuildMarkers(dir);
    for (const p of [dir, m.lock, m.done, m.failed]) rmSync(p, { recursive: true, force: true });
  };
}
