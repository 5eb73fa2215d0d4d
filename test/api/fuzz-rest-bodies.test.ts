/**
 * REST fuzz for the operations that take a JSON body (POST: fee rate, Rosetta, …), seeded: for every such operation of
 * the OpenAPI document, bodies that are not JSON, JSON of the wrong kind, the documented object with each property
 * given a hostile value or left out, unknown and deeply nested members, very long strings. The service must answer
 * every one, without a 5xx other than one the operation documents (a node it needs being unreachable), with a JSON
 * error for every 4xx; and it must still answer afterwards.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../helpers/service.js';
import { HOSTILE_FAMILIES, hostileValue, int, pick, seededRandom, type Rng } from '../helpers/fuzz.js';
import { buildOpenApiDocument } from '../../src/api/openapi.js';
import { allEndpoints, TAGS } from '../../src/api/endpoints.js';

const PER_OPERATION = 150;
const CONCURRENCY = 16;
const SEED = 0x5eed_0b0d;

type Json = Record<string, unknown>;

interface BodyOperation {
  path: string;
  schema: Json;
  /** 5xx statuses the operation documents (e.g. 503: no node reachable) */
  documented5xx: Set<number>;
}

let svc: TestService;
let ops: BodyOperation[];
let components: Record<string, Json>;

beforeAll(async () => {
  // the stream delivered, every message accepted: a copy of its imported database (test/helpers/fixture-db.ts)
  svc = await startTestService({}, { fixture: 'mocknet' });
  const doc = buildOpenApiDocument({ version: 'fuzz', endpoints: allEndpoints(), tags: TAGS }) as unknown as {
    paths: Record<string, Record<string, { requestBody?: { content: Record<string, { schema: Json }> }; responses: Record<string, unknown> }>>;
    components: { schemas: Record<string, Json> };
  };
  components = doc.components.schemas;
  ops = [];
  for (const [path, methods] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(methods)) {
      if (method !== 'post' || !op.requestBody || path.includes('{')) continue;
      const schema = op.requestBody.content['application/json']?.schema ?? {};
      const documented5xx = new Set(Object.keys(op.responses).map(Number).filter((s) => s >= 500));
      ops.push({ path, schema, documented5xx });
    }
  }
}, 300_000);

afterAll(async () => {
  await svc?.stop();
});

function resolve(schema: Json): Json {
  const ref = schema.$ref;
  if (typeof ref === 'string') return resolve(components[ref.split('/').pop()!] ?? {});
  return schema;
}

/** A value of the schema's kind (strings for strings, objects with their properties), not necessarily valid. */
function plausible(rng: Rng, schema: Json, depth = 0): unknown {
  const s = resolve(schema);
  const type = s.type;
  if (Array.isArray(s.enum)) return pick(rng, s.enum as unknown[]);
  if (type === 'object' || s.properties) {
    const out: Json = {};
    for (const [k, v] of Object.entries((s.properties ?? {}) as Record<string, Json>)) {
      if (depth < 4) out[k] = plausible(rng, v, depth + 1);
    }
    return out;
  }
  if (type === 'array') return depth < 4 && s.items ? [plausible(rng, s.items as Json, depth + 1)] : [];
  if (type === 'integer' || type === 'number') return int(rng, 1000);
  if (type === 'boolean') return rng() < 0.5;
  if (Array.isArray(s.anyOf) && s.anyOf.length) return plausible(rng, pick(rng, s.anyOf as Json[]), depth + 1);
  return 'x';
}

function hostileJson(rng: Rng): unknown {
  return pick(rng, [
    () => null,
    () => 0,
    () => -1e308,
    () => '',
    () => true,
    () => [],
    () => hostileValue(rng, pick(rng, HOSTILE_FAMILIES)),
    () => ({ __proto__: { polluted: true }, constructor: { prototype: {} } }),
    () => {
      let v: unknown = 'deep';
      for (let i = 0; i < 2000; i++) v = { a: v };
      return v;
    },
    () => 'z'.repeat(200_000),
  ])();
}

/** A request body: raw text (possibly not JSON) and what was done to it. */
function generate(rng: Rng, op: BodyOperation): string {
  const r = rng();
  if (r < 0.1) return pick(rng, ['', '{', 'not json', '{"a":', '\u0000', '[1,2', 'null', '"string"', '12']);
  if (r < 0.2) return JSON.stringify(hostileJson(rng));
  const body = plausible(rng, op.schema) as Json;
  if (body && typeof body === 'object' && !Array.isArray(body)) {
    const keys = Object.keys(body);
    for (const k of keys) {
      const x = rng();
      if (x < 0.25) body[k] = hostileJson(rng);
      else if (x < 0.35) delete body[k];
      else if (x < 0.5 && body[k] && typeof body[k] === 'object') {
        const inner = body[k] as Json;
        for (const ik of Object.keys(inner)) if (rng() < 0.5) inner[ik] = hostileJson(rng);
      }
    }
    if (rng() < 0.1) body[pick(rng, ['extra', '__proto__', 'constructor'])] = hostileJson(rng);
  }
  return JSON.stringify(body);
}

describe('REST fuzz: JSON bodies', () => {
  it(`${PER_OPERATION} hostile bodies for every operation that takes one: no undocumented 5xx, JSON errors`, async () => {
    expect(ops.length, 'operations with a JSON body in the document').toBeGreaterThan(0);
    const rng = seededRandom(SEED);
    const jobs = ops.flatMap((op) => Array.from({ length: PER_OPERATION }, () => ({ op, body: generate(rng, op) })));
    const bad: string[] = [];
    const byStatus: Record<number, number> = {};
    let next = 0;
    const worker = async () => {
      while (next < jobs.length) {
        const { op, body } = jobs[next++];
        let status = 0;
        let text = '';
        let type = '';
        try {
          const res = await fetch(svc.api + op.path, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body,
            signal: AbortSignal.timeout(30_000),
          });
          status = res.status;
          type = res.headers.get('content-type') ?? '';
          text = await res.text();
        } catch (err) {
          bad.push(`no answer ${op.path} ${body.slice(0, 120)}: ${String(err)}`);
          continue;
        }
        byStatus[status] = (byStatus[status] ?? 0) + 1;
        if (status >= 500 && !op.documented5xx.has(status)) bad.push(`${status} ${op.path} ${body.slice(0, 120)} → ${text.slice(0, 200)}`);
        if (status >= 400) {
          let json = false;
          try {
            JSON.parse(text);
            json = type.startsWith('application/json');
          } catch {
            json = false;
          }
          if (!json) bad.push(`non-JSON ${status} ${op.path} ${body.slice(0, 120)} → ${text.slice(0, 200)}`);
        }
      }
    };
    await Promise.all(Array.from({ length: CONCURRENCY }, worker));
    console.log(`REST body fuzz: ${jobs.length} requests over ${ops.length} operations, statuses ${JSON.stringify(byStatus)}`);
    expect(bad.slice(0, 10)).toEqual([]);
    expect(byStatus[400] ?? 0).toBeGreaterThan(0);
    expect((await fetch(svc.api + '/extended')).status).toBe(200);
  });
});
