// HTTP GETs against a running API, for the tests: one place for reading an answer (status, JSON body, the headers the
// tests look at), so a test file states what it asks and what it expects, not how to fetch.
import { expect } from 'vitest';
import type { AnswerCheck } from './openapi-validate.js';

/** JSON as the tests read it: the answers' shapes are asserted value by value. */
export type Json = any; // eslint-disable-line @typescript-eslint/no-explicit-any

/** An API answer as the server sent it (redirects are not followed: a 3xx is the answer). */
export interface Answer<T = Json> {
  status: number;
  /** the body parsed as JSON; null for an empty body; the text itself for a body that is not JSON */
  body: T;
  /** the body as sent */
  text: string;
  /** the Location header (redirects), or null */
  location: string | null;
  /** the ETag header, or null */
  etag: string | null;
  headers: Headers;
}

export interface GetOptions {
  /** request headers (If-None-Match, x-api-key, …) */
  headers?: Record<string, string>;
  /** validates the answer (an OpenAPI checker, test/helpers/openapi-validate.ts); a complaint fails the test */
  check?: AnswerCheck;
  /** the status the answer must have (the failure names the path and shows the body) */
  status?: number;
}

/** Where the API listens: a base URL, or a started service (`{ api }`, test/helpers/service.ts). */
export type ApiTarget = string | { api: string };

const baseOf = (target: ApiTarget) => (typeof target === 'string' ? target : target.api);

/** GET `path` from the API; never follows a redirect; asserts the status only where `opts.status` names one. */
export async function get<T = Json>(target: ApiTarget, path: string, opts: GetOptions = {}): Promise<Answer<T>> {
  const res = await fetch(baseOf(target) + path, { headers: opts.headers, redirect: 'manual' });
  const text = await res.text();
  let body: unknown = null;
  if (text !== '') {
    try {
      body = JSON.parse(text);
    } catch {
      body = text;
    }
  }
  if (opts.status !== undefined) expect(res.status, `${path}: ${text.slice(0, 500)}`).toBe(opts.status);
  if (opts.check) expect(opts.check('GET', path, res.status, body, res.headers.get('content-type')), path).toBeUndefined();
  return { status: res.status, body: body as T, text, location: res.headers.get('location'), etag: res.headers.get('etag'), headers: res.headers };
}

/** GET `path`, require a 200 (the failure names the path and the answer) and return the JSON body. */
export async function getOk<T = Json>(target: ApiTarget, path: string, opts: GetOptions = {}): Promise<T> {
  return (await get<T>(target, path, { ...opts, status: 200 })).body;
}
