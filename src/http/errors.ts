import { httpError, type HttpResponse } from './response.js';
import { isDriverSocketFault } from '../store/faults.js';

const UNAVAILABLE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
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
  // postgres.js writing to a connection that just closed (src/store/faults.ts): the connection is lost, not a bug here
  if (isDriverSocketFault(err)) return true;
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && UNAVAILABLE_CODES.has(code);
}

/** Router error mapper: an unreachable database is 503 (retry later), never a 500 or a crash. */
export function mapUnavailable(err: unknown): HttpResponse | undefined {
  if (isUnavailable(err)) return httpError(503, 'database unavailable, try again later', undefined, { 'retry-after': 5 });
  return undefined;
}
