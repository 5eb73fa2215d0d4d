/** Hooks for the ingest process: the runner, attached to the projector and started (src/hooks/runner.ts). */
import type { Logger } from 'pino';
import type { Config } from '../config.js';
import type { Sql } from '../store/connect.js';
import type { Projector } from '../observer/projector.js';
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
  runner.start();
  return runner;
}
