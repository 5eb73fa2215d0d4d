// vitest globalSetup: runs once per `vitest run`, in the main process, before any test file.
import { ensureTemplate } from './db.js';

export default async function setup(): Promise<void> {
  // The migrated template every test database is copied from, built before the workers start (else they queue on it).
  await ensureTemplate();
}
