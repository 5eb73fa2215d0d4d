/**
 * The endpoint declaration's input handling (src/api/endpoint.ts), without a server: query strings are coerced by the
 * schema's shape and validated, failures become the reference's messages naming the parameter, in one place.
 */
import { describe, it, expect } from 'vitest';
import { z } from 'zod';
import { parseInput } from '../../src/api/endpoint.js';
import { HeightOrHash, Limit, List, Offset, PrincipalParam, TxId, Unanchored, paging } from '../../src/api/schemas/params.js';
import { allEndpoints } from '../../src/api/endpoints.js';

const query = (q: string) => new URLSearchParams(q);

function parseQuery(schema: z.ZodObject, q: string) {
  return parseInput({ query: schema }, { query: query(q) });
}

function message(schema: z.ZodObject, q: string): string {
  const r = parseQuery(schema, q);
  if (r.ok) throw new Error(`expected a failure for ${q}`);
  return r.message;
}

describe('query coercion and validation', () => {
  const pageSchema = z.object(paging(20, 50));

  it('integers: absent → default, 0 → default, strings coerced like the reference (ajv)', () => {
    expect(parseQuery(pageSchema, '')).toMatchObject({ ok: true, query: { limit: 20, offset: 0 } });
    expect(parseQuery(pageSchema, 'limit=0&offset=3')).toMatchObject({ ok: true, query: { limit: 20, offset: 3 } });
    expect(parseQuery(pageSchema, 'limit=7')).toMatchObject({ ok: true, query: { limit: 7 } });
    expect(parseQuery(pageSchema, 'limit=0x10')).toMatchObject({ ok: true, query: { limit: 16 } });
  });

  it('integer failures name the parameter and the bound', () => {
    expect(message(pageSchema, 'limit=51')).toBe('querystring/limit must be <= 50');
    expect(message(pageSchema, 'limit=-1')).toBe('querystring/limit must be >= 0');
    expect(message(pageSchema, 'limit=abc')).toBe('querystring/limit must be integer');
    expect(message(pageSchema, 'limit=1.5')).toBe('querystring/limit must be integer');
    expect(message(pageSchema, 'offset=x')).toBe('querystring/offset must be integer');
    expect(message(z.object({ offset: Offset({ min: -300, max: 300 }) }), 'offset=-301')).toBe('querystring/offset must be >= -300');
  });

  it('booleans accept true/false/1/0 only', () => {
    const s = z.object({ unanchored: Unanchored });
    expect(parseQuery(s, 'unanchored=1')).toMatchObject({ ok: true, query: { unanchored: true } });
    expect(parseQuery(s, 'unanchored=false')).toMatchObject({ ok: true, query: { unanchored: false } });
    expect(message(s, 'unanchored=maybe')).toBe('querystring/unanchored must be boolean');
  });

  it('enums list the allowed values', () => {
    const s = z.object({ order: z.enum(['asc', 'desc']).default('desc') });
    expect(message(s, 'order=up')).toBe('querystring/order must be equal to one of the allowed values: asc, desc');
  });

  it('lists: repeated and comma-separated values, items named by index', () => {
    const s = z.object({ tx_id: List(TxId).min(1) });
    const a = '0x' + 'ab'.repeat(32);
    const b = 'CD'.repeat(32);
    expect(parseQuery(s, `tx_id=${a}&tx_id=${b}`)).toMatchObject({ ok: true, query: { tx_id: [a, '0x' + b.toLowerCase()] } });
    expect(parseQuery(s, `tx_id=${a},${b}`)).toMatchObject({ ok: true, query: { tx_id: [a, '0x' + b.toLowerCase()] } });
    expect(message(s, `tx_id=${a}&tx_id=0x12`)).toMatch(/^querystring\/tx_id\/1 must match pattern/);
    expect(message(s, '')).toBe("querystring must have required property 'tx_id'");
  });

  it('a repeated-only list keeps commas in its values (for its item schema to judge)', () => {
    const s = z.object({ id: List(z.string().regex(/^[a-z]+$/), { repeatedOnly: true }).min(1) });
    expect(parseQuery(s, 'id=a&id=b')).toMatchObject({ ok: true, query: { id: ['a', 'b'] } });
    expect(message(s, 'id=a,b')).toMatch(/^querystring\/id\/0 must match pattern/);
  });

  it('a malformed principal gets a message in plain words that names the parameter', () => {
    const s = z.object({ principal: PrincipalParam });
    const r = parseInput({ params: s }, { params: { principal: 'nope' } });
    expect(r.ok).toBe(false);
    if (!r.ok) {
      // plain words that name the parameter, no regular expression
      expect(r.message).toMatch(/^params\/principal must be a Stacks address .* or a contract id/);
      expect(r.message).not.toMatch(/\^|\[0-9|\\d/);
    }
  });

  it('unions try the string first, then the number it spells', () => {
    const s = z.object({ h: HeightOrHash });
    const hash = '1'.repeat(64);
    expect(parseInput({ params: s }, { params: { h: hash } })).toMatchObject({ ok: true, params: { h: hash } });
    expect(parseInput({ params: s }, { params: { h: '12' } })).toMatchObject({ ok: true, params: { h: 12 } });
    const neg = parseInput({ params: s }, { params: { h: '-1' } });
    expect(neg.ok).toBe(false);
    if (!neg.ok) expect(neg.message).toMatch(/^params\/h must be a block height >= 0/);
  });

  it('a limit schema documents its default and maximum', () => {
    const json = z.toJSONSchema(Limit(20, 30), { io: 'input' }) as Record<string, unknown>;
    expect(json).toMatchObject({ type: 'integer', default: 20, maximum: 30, minimum: 0 });
  });
});

describe('declarations', () => {
  it('every endpoint has a unique method + path and operationId, and documents what it answers', () => {
    const seen = new Set<string>();
    const ids = new Set<string>();
    for (const ep of allEndpoints()) {
      const key = `${ep.method} ${ep.path}`;
      expect(seen.has(key), key).toBe(false);
      seen.add(key);
      expect(ids.has(ep.operationId), ep.operationId).toBe(false);
      ids.add(ep.operationId);
      expect(Boolean(ep.response || ep.text || ep.redirect), `${key} declares its answer`).toBe(true);
      // path parameters of the pattern and of the schema agree
      const inPath = [...ep.path.matchAll(/:([A-Za-z_]\w*)/g)].map((m) => m[1]).sort();
      expect(Object.keys(ep.params?.shape ?? {}).sort(), key).toEqual(inPath);
    }
  });
});
