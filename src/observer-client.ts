/**
 * What the commands that POST to a running observer (`replay`, `demo`) share: which failures are worth retrying (the
 * service is not up yet, or busy: connection refused or reset, timeouts, 5xx) and which are not (a 4xx: the URL is not
 * an observer, or the message is refused for good), and a message naming the likely cause of the latter.
 */
import { PulseError } from './errors.js';

export const DEFAULT_OBSERVER_URL = 'http://127.0.0.1:3700';

/** A failure retrying cannot fix: the command stops with exit code 1 and this message. */
export class ObserverRejected extends PulseError {}

/** Waits `ms` between attempts; resolves at once when `signal` aborts (or already has). */
export const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve) => {
    if (signal?.aborted) return resolve();
    const t = setTimeout(done, ms);
    function done() {
      clearTimeout(t);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });

/** Whether an HTTP status is worth another attempt (5xx: the service or its database is busy or restarting). */
export const retryableStatus = (status: number): boolean => status >= 500 || status === 408 || status === 429;

/** The code of a failed fetch: ECONNREFUSED, ECONNRESET, timeout, … */
export function fetchFailureCode(err: unknown): string {
  const e = err as { name?: string; cause?: { code?: string; message?: string }; code?: string };
  if (e.name === 'TimeoutError') return 'timeout';
  return e.cause?.code ?? e.code ?? e.cause?.message ?? e.name ?? 'error';
}

/** `message` of a JSON error body, else the start of the text. */
export function bodyDetail(text: string): string {
  try {
    const parsed = JSON.parse(text) as { message?: unknown; error?: unknown };
    return String(parsed.message ?? parsed.error ?? '');
  } catch {
    return text.slice(0, 200);
  }
}

/** Whether `base` answers like stacks-pulse's REST API (GET /extended). */
async function looksLikeApi(base: string): Promise<boolean> {
  try {
    const res = await fetch(`${base}/extended`, { signal: AbortSignal.timeout(5000) });
    const text = await res.text();
    return res.status === 200 && /server_version|chain_tip/.test(text);
  } catch {
    return false;
  }
}

/**
 * Why `base` answered `status` to a POST of `path`, as one sentence naming what to change: a 404 from the REST API (the
 * API port given by mistake) says where the observer listens.
 */
export async function explainRejection(base: string, path: string, status: number, detail: string): Promise<string> {
  if (status === 404 || status === 405) {
    if (await looksLikeApi(base)) {
      return (
        `${base} answered ${status} to POST ${path}: this looks like the API port, the observer listens on ` +
        `${DEFAULT_OBSERVER_URL} by default (OBSERVER_HOST:OBSERVER_PORT of the service): pass that as --url`
      );
    }
    return `${base} answered ${status} to POST ${path}${detail ? ` (${detail})` : ''}: this is not a stacks-pulse event observer; pass the observer's URL as --url (default ${DEFAULT_OBSERVER_URL})`;
  }
  if (status === 413) return `${base} answered 413 to POST ${path}: the message is larger than the observer accepts (OBSERVER_BODY_LIMIT of the service)`;
  return `${base} answered ${status} to POST ${path}${detail ? `: ${detail}` : ''} (retrying cannot change that answer)`;
}

/** The message for a service that is not there (connection refused / unknown host), naming how to start it. */
export function notListening(base: string, code: string): string {
  return `nothing answers at ${base} (${code}): start the service first (npm start, or npx stacks-pulse serve) or pass its observer's URL as --url`;
}

/**
 * Checks that `base` is a running observer before anything is sent (GET / answers its "ready" line); throws
 * ObserverRejected naming the likely mistake otherwise: nothing listening, the API port, something else.
 */
export async function probeObserver(base: string): Promise<void> {
  let res: Response;
  try {
    res = await fetch(`${base}/`, { signal: AbortSignal.timeout(10_000) });
  } catch (err) {
    throw new ObserverRejected(notListening(base, fetchFailureCode(err)));
  }
  const text = await res.text().catch(() => '');
  if (res.status === 200 && text.includes('core-node POST messages')) return;
  if (await looksLikeApi(base)) {
    throw new ObserverRejected(
      `${base} is not the event observer: this looks like the API port, the observer listens on ${DEFAULT_OBSERVER_URL} ` +
        'by default (OBSERVER_HOST:OBSERVER_PORT of the service): pass that as --url',
    );
  }
  throw new ObserverRejected(
    `${base} answered ${res.status} to GET /: this is not a stacks-pulse event observer; pass the observer's URL as --url (default ${DEFAULT_OBSERVER_URL})`,
  );
}
