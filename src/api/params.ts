/**
 * Query and path parameter parsing with the reference's validation messages ("querystring/limit must be <= 30").
 * Every failure throws HttpError(400) naming the parameter.
 */
import { HttpError } from '../http/response.js';
import type { HttpRequest } from '../http/router.js';

export function badParam(message: string): never {
  throw new HttpError(400, message);
}

const INT_RE = /^-?\d+$/;

/** An optional integer query parameter with bounds; absent → undefined. */
export function queryInt(req: HttpRequest, name: string, bounds: { min?: number; max?: number } = {}): number | undefined {
  const raw = req.query.get(name);
  if (raw === null) return undefined;
  return checkInt(`querystring/${name}`, raw, bounds);
}

export function checkInt(label: string, raw: string, bounds: { min?: number; max?: number } = {}): number {
  const v = raw.trim();
  if (!INT_RE.test(v) || !Number.isSafeInteger(Number(v))) badParam(`${label} must be integer`);
  const n = Number(v);
  if (bounds.min !== undefined && n < bounds.min) badParam(`${label} must be >= ${bounds.min}`);
  if (bounds.max !== undefined && n > bounds.max) badParam(`${label} must be <= ${bounds.max}`);
  return n;
}

/** limit/offset paging: limit 0 or absent → default; over max → 400. */
export function paging(req: HttpRequest, defaults: { limit: number; max: number; limitName?: string; offsetName?: string; minOffset?: number; maxOffset?: number }) {
  const limitName = defaults.limitName ?? 'limit';
  const offsetName = defaults.offsetName ?? 'offset';
  const limit = queryInt(req, limitName, { min: 0, max: defaults.max }) || defaults.limit;
  const offset = queryInt(req, offsetName, { min: defaults.minOffset ?? 0, max: defaults.maxOffset }) ?? 0;
  return { limit, offset };
}

/** true/false (also 1/0, as the reference's coercion accepts); absent → default. */
export function queryBool(req: HttpRequest, name: string, def = false): boolean {
  const raw = req.query.get(name);
  if (raw === null) return def;
  if (raw === 'true' || raw === '1') return true;
  if (raw === 'false' || raw === '0') return false;
  return badParam(`querystring/${name} must be boolean`);
}

export const TX_ID_RE = /^(0x)?[a-fA-F0-9]{64}$/;

/** A tx id in the canonical 0x-lowercase form; `label` e.g. "params/tx_id". */
export function checkTxId(label: string, raw: string): string {
  if (!TX_ID_RE.test(raw)) badParam(`${label} must match pattern "^(0x)?[a-fA-F0-9]{64}$"`);
  return normalizeHash(raw);
}

export function normalizeHash(raw: string): string {
  return (raw.startsWith('0x') ? raw : '0x' + raw).toLowerCase();
}

const C32 = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
const ADDRESS_PATTERN = `^[${C32}]{28,41}`;
const CONTRACT_PATTERN = `^[${C32}]{28,41}.[a-zA-Z]([a-zA-Z0-9]|[-_]){0,39}$`;
const ADDRESS_RE = new RegExp(`^S[PMTN][${C32}]{26,39}$`);
const CONTRACT_NAME_RE = /^[a-zA-Z]([a-zA-Z0-9]|[-_]){0,127}$/;

export function isStacksAddress(s: string): boolean {
  return ADDRESS_RE.test(s);
}

export function isPrincipal(s: string): boolean {
  const dot = s.indexOf('.');
  if (dot < 0) return isStacksAddress(s);
  return isStacksAddress(s.slice(0, dot)) && CONTRACT_NAME_RE.test(s.slice(dot + 1));
}

/** A standard or contract principal; the message mirrors the reference's schema error. */
export function checkPrincipal(label: string, raw: string): string {
  if (!isPrincipal(raw)) {
    badParam(
      `${label} must match pattern "${ADDRESS_PATTERN}", ${label} must match pattern "${CONTRACT_PATTERN}", ${label} must match a schema in anyOf`,
    );
  }
  return raw;
}

/** A standard address only (mempool filters). */
export function checkAddress(label: string, raw: string): string {
  if (!isPrincipal(raw)) badParam(`${label} must match pattern "${ADDRESS_PATTERN}"`);
  return raw;
}

/** One of a fixed set of values. */
export function checkEnum<T extends string>(label: string, raw: string, values: readonly T[]): T {
  if (!(values as readonly string[]).includes(raw)) {
    badParam([...values.map(() => `${label} must be equal to constant`), `${label} must match a schema in anyOf`].join(', '));
  }
  return raw as T;
}
