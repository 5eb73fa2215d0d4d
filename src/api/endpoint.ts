/**
 * One declaration per endpoint. `endpoint({...})` states a route's method, path, zod schemas (path params, query, JSON
 * body, the 200 answer), its documentation and its handler; `registerEndpoints` puts a list of them on the router,
 * the OpenAPI document (src/api/openapi.ts) and the cache policy (src/api/cache.ts) read the same list.
 *
 * The router side (this file) does all the parameter work in ONE place:
 *   - query values arrive as strings: they are coerced by the shape of the field's schema (integers, booleans, lists
 *     — repeated and/or comma-separated), then validated by the schema;
 *   - a failure becomes a 400 whose message names the parameter the way the reference does
 *     (`querystring/limit must be <= 30`, `params/principal must match pattern "…"`, the `anyOf` form for unions),
 *     enum failures list the allowed values;
 * so a handler receives typed, validated values and never parses a string.
 */
import { z } from 'zod';
import type { Router, HttpRequest } from '../http/router.js';
import { HttpError, json, type HttpResponse } from '../http/response.js';
import type { ApiContext } from './context.js';
import { recordedNetwork } from '../store/network.js';
import { principalKnown } from '../store/principal-known.js';

export type Method = 'GET' | 'POST' | 'DELETE' | 'ANY';

/**
 * How the answer may be cached (src/api/cache.ts): 'etag' — a function of the chain state and the URL: tagged with the
 * chain version (304 on If-None-Match) and kept in memory for that version; 'none' — not cached (counters, redirects,
 * answers that need the node).
 */
export type CachePolicy = 'etag' | 'none';

export type ErrorStatus = 400 | 404 | 405 | 409 | 413 | 500 | 502 | 503 | 504;

type AnyObject = z.ZodObject<z.ZodRawShape>;
type Out<S> = S extends z.ZodType ? z.output<S> : undefined;

export interface EndpointInput<P, Q, B> {
  params: Out<P>;
  query: Out<Q>;
  body: Out<B>;
  /** the raw request, for the few things schemas do not carry (raw query string for redirects, headers) */
  req: HttpRequest;
}

/** A non-200 or non-JSON answer from a handler (a redirect, plain text, a prepared HttpResponse). */
export class RawReply {
  constructor(readonly response: HttpResponse) {}
}
export const raw = (response: HttpResponse): RawReply => new RawReply(response);

export interface EndpointSpec<P extends AnyObject | undefined, Q extends AnyObject | undefined, B extends z.ZodType | undefined> {
  method: Method;
  /** router pattern, e.g. `/extended/v1/tx/:tx_id` */
  path: string;
  operationId: string;
  summary: string;
  description?: string;
  tags: string[];
  deprecated?: boolean;
  params?: P;
  query?: Q;
  body?: B;
  /** the 200 JSON answer; must be a registered component (schemas/common.ts `component()`) */
  response?: z.ZodType;
  responseDescription?: string;
  /** a non-JSON 200 answer (plain text, YAML) */
  text?: { contentType: string; description: string };
  redirect?: { status: 301 | 302; description: string };
  errors?: ErrorStatus[];
  /**
   * The documented body of the error answers when it is not the common Error (BNS: `{error}` or Error; Rosetta: its
   * error objects or Error).
   */
  errorResponse?: z.ZodType;
  /** default: 'etag' for GET, 'none' for POST */
  cache?: CachePolicy;
  /** left out of the OpenAPI document (hidden redirects) */
  hidden?: boolean;
  /**
   * Served by another module on the same app (the node proxy): declared here so the document describes it, not
   * registered by registerEndpoints. The document marks it `x-served-by`.
   */
  servedBy?: 'node-proxy';
  /** Replaces the default 400 answer for invalid input (Rosetta answers its own error objects). */
  invalid?: (message: string, issues: z.core.$ZodIssue[]) => HttpResponse;
  /** Body limit for this route, bytes (default: the router's). */
  bodyLimit?: number;
  handler: (input: EndpointInput<P, Q, B>, ctx: ApiContext) => unknown;
}

export type Endpoint = EndpointSpec<AnyObject | undefined, AnyObject | undefined, z.ZodType | undefined> & {
  readonly cachePolicy: CachePolicy;
};

export function endpoint<P extends AnyObject | undefined = undefined, Q extends AnyObject | undefined = undefined, B extends z.ZodType | undefined = undefined>(
  spec: EndpointSpec<P, Q, B>,
): Endpoint {
  return { ...spec, cachePolicy: spec.cache ?? (spec.method === 'GET' ? 'etag' : 'none') } as unknown as Endpoint;
}

/** Throw from a handler: the 404 of the endpoint (`notFound('Block not found')`). */
export function notFound(message: string): never {
  throw new HttpError(404, message);
}

/** Throw from a handler for a cross-parameter rule the schemas cannot state (`address` with other filters). */
export function badRequest(message: string): never {
  throw new HttpError(400, message);
}

// ---- schema introspection ------------------------------------------------------------------------------------------

type Def = { type: string; innerType?: z.ZodType; in?: z.ZodType; options?: z.ZodType[]; element?: z.ZodType };
const defOf = (s: z.ZodType): Def => (s as unknown as { _zod: { def: Def } })._zod.def;

/** The schema under optional / default / nullable / pipe (input side). */
function base(s: z.ZodType): z.ZodType {
  for (;;) {
    const d = defOf(s);
    if ((d.type === 'optional' || d.type === 'default' || d.type === 'prefault' || d.type === 'nullable' || d.type === 'catch' || d.type === 'readonly') && d.innerType) s = d.innerType;
    else if (d.type === 'pipe' && d.in && defOf(d.in).type !== 'transform') s = d.in;
    else return s;
  }
}

/** True when the field takes a list (repeated and/or comma-separated query values). */
export function isListParam(s: z.ZodType): boolean {
  return defOf(base(s)).type === 'array';
}

/** ajv's string → number coercion (`x && x == +x`): decimal, hex (`0x10`), exponent forms, surrounding spaces. */
const numeric = (value: string): boolean => value !== '' && !Number.isNaN(Number(value));

/**
 * What a query/path string may stand for under the field's schema (the reference's ajv coercion), in the order to
 * try them: a union tries the string as written first (a 64-hex hash of digits is a hash, not a number), then the
 * number it spells.
 */
function candidates(s: z.ZodType, value: string): unknown[] {
  const b = base(s);
  const t = defOf(b).type;
  if (t === 'number' || t === 'bigint') return [numeric(value) ? Number(value) : value];
  if (t === 'boolean') return [value === 'true' || value === '1' ? true : value === 'false' || value === '0' ? false : value];
  if (t === 'union') {
    const opts = defOf(b).options ?? [];
    const out: unknown[] = [value];
    if (opts.some((o) => defOf(base(o)).type === 'number') && numeric(value)) out.push(Number(value));
    if (opts.some((o) => defOf(base(o)).type === 'boolean') && (value === 'true' || value === 'false')) out.push(value === 'true');
    return out;
  }
  return [value];
}

function coerce(s: z.ZodType, value: string): unknown {
  return candidates(s, value)[0];
}

/**
 * Item schemas of lists whose values are taken as repeated only (a comma is part of the value, not a separator). The
 * mark is on the item: `.min()` / `.describe()` on the list make new list schemas, with the same item.
 */
export const REPEATED_ONLY = new WeakSet<z.ZodType>();

/**
 * Principal schemas whose value must belong to the database's network (a mainnet `SP…`/`SM…` address on a testnet
 * database, or the reverse, is a 400 rather than an empty account). Marked on the final schema a field uses (or the
 * one under its optional/default).
 */
export const NETWORK_CHECKED = new WeakSet<z.ZodType>();

export function networkChecked<T extends z.ZodType>(schema: T): T {
  NETWORK_CHECKED.add(schema);
  return schema;
}

function coerceList(s: z.ZodType, values: string[]): unknown[] {
  const item = defOf(base(s)).element;
  const parts = item && REPEATED_ONLY.has(item) ? values : values.flatMap((v) => v.split(','));
  return item ? parts.map((p) => coerce(item, p)) : parts;
}

// ---- zod issues → the reference's messages ----------------------------------------------------------------------------

/** `{label}` in a custom schema message stands for the parameter's label (`querystring/limit`). */
export const LABEL = '{label}';

function issueText(label: string, issue: z.core.$ZodIssue): string {
  const where = issue.path.length ? `${label}/${issue.path.join('/')}` : label;
  const custom = issue.message;
  if (custom.includes(LABEL)) return custom.split(LABEL).join(where);
  const i = issue as z.core.$ZodIssue & Record<string, unknown>;
  switch (issue.code) {
    case 'invalid_type': {
      const expected = i.expected as string;
      if (expected === 'number' || expected === 'int') return `${where} must be integer`;
      return `${where} must be ${expected}`;
    }
    case 'too_small': {
      const min = String(i.minimum);
      if (i.origin === 'array' || i.origin === 'set') return `${where} must NOT have fewer than ${min} items`;
      if (i.origin === 'string') return `${where} must NOT have fewer than ${min} characters`;
      return `${where} must be ${i.inclusive === false ? '>' : '>='} ${min}`;
    }
    case 'too_big': {
      const max = String(i.maximum);
      if (i.origin === 'array' || i.origin === 'set') return `${where} must NOT have more than ${max} items`;
      if (i.origin === 'string') return `${where} must NOT have more than ${max} characters`;
      return `${where} must be ${i.inclusive === false ? '<' : '<='} ${max}`;
    }
    case 'invalid_format': {
      const pattern = typeof i.pattern === 'string' ? i.pattern.replace(/^\/(.*)\/[a-z]*$/, '$1') : String(i.format);
      return i.format === 'regex' ? `${where} must match pattern "${pattern}"` : `${where} must match format "${String(i.format)}"`;
    }
    case 'invalid_value': {
      const values = (i.values as unknown[]).map((v) => String(v));
      return values.length === 1
        ? `${where} must be equal to constant ${values[0]}`
        : `${where} must be equal to one of the allowed values: ${values.join(', ')}`;
    }
    case 'invalid_union': {
      const branches = (i.errors as z.core.$ZodIssue[][]) ?? [];
      const parts = branches.flatMap((b) => b.slice(0, 1).map((x) => issueText(label, { ...x, path: [...issue.path, ...x.path] })));
      return [...parts, `${where} must match a schema in anyOf`].join(', ');
    }
    case 'unrecognized_keys':
      return `${where} must NOT have additional properties`;
    default:
      return `${where} ${custom}`;
  }
}

/** The message of the first failing issue (ajv stops at the first error too). */
export function invalidMessage(label: string, issues: z.core.$ZodIssue[]): string {
  return issueText(label, issues[0]);
}

interface Parsed {
  ok: true;
  value: unknown;
}
interface Failed {
  ok: false;
  message: string;
  issues: z.core.$ZodIssue[];
}

/** A raw field value: absent, one string (tried as each of its coercions), or a list (already coerced). */
type RawField = undefined | { one: string } | { list: unknown[] };

function parseFields(schema: AnyObject, read: (name: string, s: z.ZodType) => RawField, where: string): Parsed | Failed {
  const out: Record<string, unknown> = {};
  for (const [name, s] of Object.entries(schema.shape) as [string, z.ZodType][]) {
    const raw = read(name, s);
    const inputs = raw === undefined ? [undefined] : 'one' in raw ? candidates(s, raw.one) : [raw.list];
    let r: ReturnType<z.ZodType['safeParse']> | undefined;
    for (const input of inputs) {
      r = s.safeParse(input);
      if (r.success) break;
    }
    if (!r!.success) {
      const issues = r!.error.issues;
      if (raw === undefined) return { ok: false, message: `${where} must have required property '${name}'`, issues };
      return { ok: false, message: invalidMessage(`${where}/${name}`, issues), issues };
    }
    if (r!.data !== undefined) out[name] = r!.data;
  }
  return { ok: true, value: out };
}

function parseQuery(schema: AnyObject, q: URLSearchParams): Parsed | Failed {
  return parseFields(
    schema,
    (name, s) => {
      const all = q.getAll(name);
      if (all.length === 0) return undefined;
      return isListParam(s) ? { list: coerceList(s, all) } : { one: all[0] };
    },
    'querystring',
  );
}

function parseParams(schema: AnyObject, params: Record<string, string>): Parsed | Failed {
  return parseFields(schema, (name) => (params[name] === undefined ? undefined : { one: params[name] }), 'params');
}

function parseBody(schema: z.ZodType, body: Buffer | undefined): Parsed | Failed {
  let value: unknown;
  try {
    value = body && body.length ? JSON.parse(body.toString('utf8')) : undefined;
  } catch {
    return { ok: false, message: 'body is not valid JSON', issues: [] };
  }
  if (value === undefined) return { ok: false, message: 'body must be a JSON document', issues: [] };
  const r = schema.safeParse(value);
  if (!r.success) return { ok: false, message: invalidMessage('body', r.error.issues), issues: r.error.issues };
  return { ok: true, value: r.data };
}

export type ParsedInput = { ok: true; params: unknown; query: unknown; body: unknown } | Failed;

/** Validates raw path params, query and body against the endpoint's schemas (pure; exported for tests). */
export function parseInput(
  ep: Pick<Endpoint, 'params' | 'query' | 'body'>,
  input: { params?: Record<string, string>; query?: URLSearchParams; body?: Buffer },
): ParsedInput {
  let params: unknown;
  let query: unknown;
  let body: unknown;
  if (ep.params) {
    const r = parseParams(ep.params, input.params ?? {});
    if (!r.ok) return r;
    params = r.value;
  }
  if (ep.query) {
    const r = parseQuery(ep.query, input.query ?? new URLSearchParams());
    if (!r.ok) return r;
    query = r.value;
  }
  if (ep.body) {
    const r = parseBody(ep.body, input.body);
    if (!r.ok) return r;
    body = r.value;
  }
  return { ok: true, params, query, body };
}

/** Validates the request against the endpoint's schemas and runs its handler. */
export async function runEndpoint(ep: Endpoint, req: HttpRequest, ctx: ApiContext): Promise<HttpResponse> {
  const input = parseInput(ep, { params: req.params, query: req.query, body: req.body });
  if (!input.ok) {
    if (ep.invalid) return ep.invalid(input.message, input.issues);
    throw new HttpError(400, input.message);
  }
  const mismatch = await networkMismatch(ep, input.params, input.query, ctx);
  if (mismatch) {
    if (ep.invalid) return ep.invalid(mismatch, []);
    throw new HttpError(400, mismatch);
  }
  const out = await ep.handler({ params: input.params, query: input.query, body: input.body, req } as never, ctx);
  if (out instanceof RawReply) return out.response;
  return json(200, out);
}

const MAINNET_CHAIN_ID = 0x00000001;
const TESTNET_CHAIN_ID = 0x80000000;
/** The network of a principal by its version character (S P/M: mainnet, S T/N: testnet). */
const networkOfPrincipal = (p: string): number | undefined =>
  p[1] === 'P' || p[1] === 'M' ? MAINNET_CHAIN_ID : p[1] === 'T' || p[1] === 'N' ? TESTNET_CHAIN_ID : undefined;
const networkWords = (id: number) => (id === MAINNET_CHAIN_ID ? 'mainnet (SP…, SM…)' : 'testnet (ST…, SN…)');

/** The database's network, once known (it never changes after the first transaction); per API context. */
const knownNetwork = new WeakMap<ApiContext, number>();
async function databaseNetwork(ctx: ApiContext): Promise<number | undefined> {
  if (ctx.chainId === MAINNET_CHAIN_ID || ctx.chainId === TESTNET_CHAIN_ID) return ctx.chainId;
  const known = knownNetwork.get(ctx);
  if (known !== undefined) return known;
  const id = await recordedNetwork(ctx.sql);
  if (id === MAINNET_CHAIN_ID || id === TESTNET_CHAIN_ID) knownNetwork.set(ctx, id);
  return id;
}

/**
 * A 400 message when a network-checked principal belongs to the other network than the database's and the database
 * knows nothing of it (a chain may hold principals of the other network: those are answered).
 */
async function networkMismatch(ep: Endpoint, params: unknown, query: unknown, ctx: ApiContext): Promise<string | undefined> {
  const found: [string, string][] = [];
  const collect = (schema: AnyObject | undefined, values: unknown, where: string) => {
    if (!schema || !values || typeof values !== 'object') return;
    for (const [name, s] of Object.entries(schema.shape) as [string, z.ZodType][]) {
      const b = base(s);
      const item = defOf(b).type === 'array' ? defOf(b).element : undefined;
      if (!NETWORK_CHECKED.has(s) && !NETWORK_CHECKED.has(b) && !(item && NETWORK_CHECKED.has(base(item)))) continue;
      const v = (values as Record<string, unknown>)[name];
      for (const one of Array.isArray(v) ? v : [v]) if (typeof one === 'string') found.push([`${where}/${name}`, one]);
    }
  };
  collect(ep.params, params, 'params');
  collect(ep.query, query, 'querystring');
  if (!found.length) return undefined;
  const db = await databaseNetwork(ctx);
  if (db === undefined) return undefined; // nothing stored yet: any network may come
  for (const [label, value] of found) {
    const net = networkOfPrincipal(value);
    if (net !== undefined && net !== db && !(await principalKnown(ctx.sql, value))) {
      return `${label} is a ${networkWords(net)} address, but this service holds ${networkWords(db)} data: use an address of that network`;
    }
  }
  return undefined;
}

/** Puts every endpoint of `list` on the router. */
export function registerEndpoints(router: Router, ctx: ApiContext, list: readonly Endpoint[]): void {
  for (const ep of list) {
    if (ep.servedBy) continue;
    router.add(ep.method === 'ANY' ? '*' : ep.method, ep.path, (req) => runEndpoint(ep, req, ctx), ep.bodyLimit ? { bodyLimit: ep.bodyLimit } : undefined);
  }
}
