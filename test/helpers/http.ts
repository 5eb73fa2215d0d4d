// HTTP requests against a running API, for the tests: one place for reading an answer (status, JSON body, the headers
// the tests look at), so a test file states what it asks and what it expects, not how to fetch.
import { expect } from 'vitest';
import type { AnswerCheck } from './openapi-validate.js';
import { settled } from './service.js';

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
export function get<T = Json>(target: ApiTarget, path: string, opts: GetOptions = {}): Promise<Answer<T>> {
  return request<T>('GET', target, path, undefined, opts);
}

/** POST `body` (a string as it is, anything else as JSON) to `path`; the options and the answer as get's. */
export function post<T = Json>(target: ApiTarget, path: string, body: unknown, opts: GetOptions = {}): Promise<Answer<T>> {
  return request<T>('POST', target, path, typeof body === 'string' ? body : JSON.stringify(body), opts);
}

async function request<T>(method: 'GET' | 'POST', target: ApiTarget, path: string, body: string | undefined, opts: GetOptions): Promise<Answer<T>> {
  const headers = body === undefined ? opts.headers : { 'content-type': 'application/json', ...opts.headers };
  const res = await fetch(baseOf(target) + path, { method, headers, body, redirect: 'manual' });
  const text = await res.text();
  let json: unknown = null;
  if (text !== '') {
    try {
      json = JSON.parse(text);
    } catch {
      json = text;
    }
  }
  if (opts.status !== undefined) expect(res.status, `${method} ${path}: ${text.slice(0, 500)}`).toBe(opts.status);
  if (opts.check) expect(opts.check(method, path, res.status, json, res.headers.get('content-type')), path).toBeUndefined();
  return { status: res.status, body: json as T, text, location: res.headers.get('location'), etag: res.headers.get('etag'), headers: res.headers };
}

/** GET `path`, require a 200 (the failure names the path and the answer) and return the JSON body. */
export async function getOk<T = Json>(target: ApiTarget, path: string, opts: GetOptions = {}): Promise<T> {
  return (await get<T>(target, path, { ...opts, status: 200 })).body;
}

/**
 * POSTs one message to the observer (`body` a string as it is, anything else as JSON), as a node does; after a 200,
 * waits until the projector has applied it (the REST API shows it). Returns the observer's answer.
 */
export async function deliver(target: string | { observer: string }, path: string, body: unknown): Promise<Answer> {
  const observer = typeof target === 'string' ? target : target.observer;
  const answer = await post(observer, path, body);
  if (answer.status === 200) await settled(observer);
  return answer;
}

/** deliver(), requiring the observer to accept the message (200). */
export async function deliverOk(target: string | { observer: string }, path: string, body: unknown): Promise<void> {
  const answer = await deliver(target, path, body);
  expect(answer.status, `${path}: ${answer.text.slice(0, 500)}`).toBe(200);
}
