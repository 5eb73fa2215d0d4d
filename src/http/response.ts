// What a handler returns, and the helpers that build it. Errors are always
// `{"statusCode": N, "error": "<HTTP reason phrase>", "message": "..."}`.
import { STATUS_CODES } from 'node:http';
import { PulseError } from '../errors.js';

export type HeaderValue = string | number;

export interface HttpResponse {
  status: number;
  /** Header names are sent as given; use lower case. */
  headers?: Record<string, HeaderValue>;
  /** object → JSON (`application/json; charset=utf-8`), string → `text/plain; charset=utf-8` unless a
   * content-type header is given, Buffer → `application/octet-stream` unless given. */
  body?: string | Buffer | object;
}

export interface ErrorBody {
  statusCode: number;
  error: string;
  message: string;
  [extra: string]: unknown;
}

/** The HTTP reason phrase, e.g. 404 → "Not Found"; unknown codes → "Unknown". */
export function reasonPhrase(status: number): string {
  return STATUS_CODES[status] ?? 'Unknown';
}

export const JSON_CONTENT_TYPE = 'application/json; charset=utf-8';

/** A JSON reply. Any JSON value works (objects, arrays, strings, null); it is serialised here. */
export function json(status: number, body: unknown, headers?: Record<string, HeaderValue>): HttpResponse {
  return { status, headers: { 'content-type': JSON_CONTENT_TYPE, ...headers }, body: JSON.stringify(body) };
}

export function redirect(status: 301 | 302 | 303 | 307 | 308, location: string): HttpResponse {
  return { status, headers: { location } };
}

export function errorBody(status: number, message: string, extra?: Record<string, unknown>): ErrorBody {
  return { statusCode: status, error: reasonPhrase(status), message, ...extra };
}

/** An error reply: status with JSON `{statusCode, error, message, ...extra}`. */
export function httpError(
  status: number,
  message: string,
  extra?: Record<string, unknown>,
  headers?: Record<string, HeaderValue>,
): HttpResponse {
  return { status, headers, body: errorBody(status, message, extra) };
}

/** Throw from a handler (or hook) to reply with an error JSON; e.g. `throw new HttpError(400, 'limit must be ...')`. */
export class HttpError extends PulseError {
  readonly status: number;
  readonly extra: Record<string, unknown> | undefined;
  readonly headers: Record<string, HeaderValue> | undefined;
  constructor(status: number, message: string, extra?: Record<string, unknown>, headers?: Record<string, HeaderValue>) {
    super(message);
    this.status = status;
    this.extra = extra;
    this.headers = headers;
  }
  toResponse(): HttpResponse {
    return httpError(this.status, this.message, this.extra, this.headers);
  }
}
