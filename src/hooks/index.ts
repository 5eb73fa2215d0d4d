/**
 * Hooks for the ingest process: the runner, attached to the projector (src/hooks/runner.ts). The caller starts it
 * (runner.start()) once its payloads have somewhere to go besides the webhooks (the push room hook:<uuid>).
 */
import type { Logger } from 'pino';
import type { Config } from '../config.js';
import type { Sql } from '../store/sql.js';
import type { Projector } from '../projector/projector.js';
import { HookRunner } from './runner.js';

export function startHooks(config: Config, sql: Sql, log: Logger, projector: Projector): HookRunner {
  const runner = new HookRunner(sql, log, {
    maxPayloadBytes: config.hooksMaxPayloadBytes,
    timeoutMs: config.hooksTimeoutMs,
    allowedHosts: config.hooksAllowedHosts,
    retryMinMs: config.hooksRetryMinMs,
    retryMaxMs: config.hooksRetryMaxMs,
    concurrency: config.hooksConcurrency,
  });
  runner.attach(projector);
  return runner;
}
