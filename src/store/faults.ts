/**
 * PostgreSQL connections that die under postgres.js: a failover, a restarted primary, a backend killed with
 * pg_terminate_backend. The queries in flight reject (CONNECTION_CLOSED, 57P01, …) and their callers retry or answer
 * 503. But postgres.js 3.4.x can also fail where no caller sees it (porsager/postgres#1208): after the socket is gone,
 * its own ROLLBACK of the failed transaction is written from a timer to a null socket, and the TypeError is thrown in
 * that timer (an uncaught exception); the connection object then keeps the unsent bytes and never connects again.
 *
 * This module recognises exactly that fault (and connection losses the driver rejects with nobody listening), and
 * recovers from it: every pool is replaced by a fresh one (src/store/connect.ts), so the poisoned connection is
 * dropped. Any other uncaught error is not the driver's and still ends the process.
 */
import type { Logger } from 'pino';

/** postgres.js's connection module, ESM or CommonJS build, and any of its modules */
const DRIVER_CONNECTION_FILE = /[\\/]postgres[\\/](?:cjs[\\/])?src[\\/]connection\.js/;
const DRIVER_FILE = /[\\/]postgres[\\/](?:cjs[\\/])?src[\\/][a-z]+\.js/;
const NULL_SOCKET_WRITE = "Cannot read properties of null (reading 'write')";

/** Connection states postgres.js reports as error codes (src/errors.js `connection`). */
const DRIVER_LOSS_CODES = new Set(['CONNECTION_CLOSED', 'CONNECTION_ENDED', 'CONNECTION_DESTROYED', 'CONNECT_TIMEOUT']);
/** Server-side codes of a connection that is going away: admin/crash shutdown, cannot connect now, connection failures. */
const SERVER_LOSS_CODE = /^(57P0[1-3]|08[0-9A-Z]{3})$/;

/**
 * The driver's write to a connection that is already closed (porsager/postgres#1208): a TypeError whose innermost
 * frame is `nextWrite` in postgres.js's connection module. Nothing else matches: a null dereference in our code, or
 * elsewhere in the driver, is a bug and is not treated as a lost connection.
 */
export function isDriverSocketFault(err: unknown): boolean {
  if (!(err instanceof TypeError) || err.message !== NULL_SOCKET_WRITE) return false;
  const frame = err.stack?.split('\n').find((l) => l.trimStart().startsWith('at '));
  return frame !== undefined && /\bnextWrite\b/.test(frame) && DRIVER_CONNECTION_FILE.test(frame);
}

/** A connection loss postgres.js reported (its own connection error codes, or the server's shutdown codes). */
export function isDriverConnectionLoss(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  const code = (err as { code?: unknown }).code;
  if (typeof code !== 'string') return false;
  if (DRIVER_LOSS_CODES.has(code)) return DRIVER_FILE.test(err.stack ?? '');
  return err.name === 'PostgresError' && SERVER_LOSS_CODE.test(code);
}

/**
 * A socket error with nobody listening: postgres.js removes every listener of a connection's socket when it closes
 * (connection.js `closed`), and a reset arriving after that is emitted on a socket without an 'error' listener, which
 * Node throws as an uncaught exception. Recognised by its shape: a read/write system error of a lost TCP peer whose
 * stack holds only Node's own stream frames (no frame of this program or a library: nothing of ours threw it).
 */
export function isOrphanSocketReset(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  const e = err as { code?: unknown; syscall?: unknown };
  if (!['ECONNRESET', 'EPIPE', 'ETIMEDOUT'].includes(String(e.code)) || !['read', 'write'].includes(String(e.syscall))) return false;
  const frames = (err.stack ?? '').split('\n').filter((l) => l.trimStart().startsWith('at '));
  return frames.length > 0 && frames.every((l) => /\(node:|\bat (?:TCP|Socket|WriteWrap|afterWriteDispatched)\b/.test(l) && !/[\\/](?:src|dist|node_modules)[\\/]/.test(l));
}

type Renewer = (reason: string) => void;
const renewers = new Set<Renewer>();
let lastRenewal = 0;
let renewals = 0;

/** Registers a pool to be replaced after a driver fault (connect.ts); returns the unregister function. */
export function onDriverFault(renew: Renewer): () => void {
  renewers.add(renew);
  return () => renewers.delete(renew);
}

/** How many times the pools were replaced after a driver fault (a metric). */
export function driverFaultRenewals(): number {
  return renewals;
}

/**
 * Replaces every registered pool (at most once a second: one dead connection can fail several times in a row, and
 * the replacement itself drops the faulty one). Queries in flight on the old pools finish or fail as callers expect.
 */
export function renewPools(reason: string): void {
  const now = Date.now();
  if (now - lastRenewal < 1000) return;
  lastRenewal = now;
  renewals++;
  for (const r of renewers) r(reason);
}

/**
 * For the process's `uncaughtException` handler (which also receives unhandled rejections, `origin`
 * 'unhandledRejection'): true when `err` is the driver's lost-connection fault, which was logged and recovered from
 * (the pools are replaced); false for anything else, which the caller must treat as fatal.
 */
export function recoverFromDriverFault(err: unknown, origin: string, log: Logger): boolean {
  if (isDriverSocketFault(err)) {
    log.error({ err }, 'PostgreSQL connection lost mid-write (postgres.js): connection pools renewed, work resumes');
    renewPools('driver wrote to a closed connection');
    return true;
  }
  if (isOrphanSocketReset(err)) {
    log.warn({ err }, 'connection reset with nobody listening (a socket or query postgres.js had given up on): ignored');
    return true;
  }
  if (origin === 'unhandledRejection' && isDriverConnectionLoss(err)) {
    // a query of the driver's own (a reconnect's type fetch, a LISTEN) failed with nobody waiting for it
    log.warn({ err }, 'PostgreSQL connection lost (postgres.js, no query waiting): the driver reconnects');
    return true;
  }
  return false;
}

const UNAVAILABLE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE', // a write to a connection the server (or a proxy before it) had already closed
  'ENOTFOUND',
  'ETIMEDOUT',
  'CONNECTION_CLOSED',
  'CONNECTION_ENDED',
  'CONNECTION_DESTROYED',
  'CONNECT_TIMEOUT',
  '57P01', // admin_shutdown
  '57P02', // crash_shutdown
  '57P03', // cannot_connect_now
  '53300', // too_many_connections
  '08006', // connection_failure
  '08001', // unable to connect
]);

/** True when an error means the database (or another backing service) is unreachable, not that the request is wrong. */
export function isUnavailable(err: unknown): boolean {
  // postgres.js writing to a connection that just closed (above): the connection is lost, not a bug here
  if (isDriverSocketFault(err)) return true;
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && UNAVAILABLE_CODES.has(code);
}
