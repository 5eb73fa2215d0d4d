import { onTestFinished } from 'vitest';
import type { Logger } from 'pino';
import type { Sql } from '../../src/store/sql.js';
import { ObserverPipeline, type ObserverReply } from '../../src/observer/pipeline.js';

/**
 * An observer pipeline for one test: its projector is stopped when the test ends (before its database goes); created
 * in a beforeAll, the caller stops it.
 */
export function testPipeline(sql: Sql, log: Logger, opts?: ConstructorParameters<typeof ObserverPipeline>[2]): ObserverPipeline {
  const p = new ObserverPipeline(sql, log, opts);
  try {
    onTestFinished(() => p.stop());
  } catch {
    // outside a test (a beforeAll): the caller stops it
  }
  return p;
}

/**
 * Hands one message to the pipeline and waits until it is applied too (the observer's 200 only means "logged"), so
 * the test can read the tables right after.
 */
export async function applied(p: ObserverPipeline, path: string, body: string, opts?: { receivedAt?: number }): Promise<ObserverReply> {
  const r = await p.handle(path, body, opts);
  await p.idle();
  return r;
}
