import { httpError, type HttpResponse } from './response.js';
import { isUnavailable } from '../store/faults.js';

/** Router error mapper: an unreachable database is 503 (retry later), never a 500 or a crash. */
export function mapUnavailable(err: unknown): HttpResponse | undefined {
  if (isUnavailable(err)) return httpError(503, 'database unavailable, try again later', undefined, { 'retry-after': 5 });
  return undefined;
}
