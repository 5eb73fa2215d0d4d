/**
 * The OpenAPI document served by the API: an OpenAPI 3.1 document whose paths are exactly the router's routes, whose
 * schemas are valid JSON Schema 2020-12, with the deprecation flags, parameter limits and error answers of SPEC.md;
 * plus the /docs page and its locally served Swagger UI files.
 */
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { parse as parseYaml } from 'yaml';
import { createApiApp } from '../../src/api/app.js';
import { listen, type Listening } from '../../src/http/router.js';
import { createLogger } from '../../src/logger.js';
import { UNDOCUMENTED_ROUTES } from '../../src/api/endpoints.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';

type Json = Record<string, any>;

let db: TestDatabase;
let listening: Listening;
let appClose: () => void;
let base: string;
let routes: { method: string; pattern: string }[];
let doc: Json;

const toOpenApi = (p: string) => p.replace(/:([A-Za-z_]\w*)/g, '{$1}');

beforeAll(async () => {
  db = await createTestDatabase();
  const log = createLogger('silent');
  const { app, router } = createApiApp({ sql: db.read, log, serverVersion: 'stacks-pulse v9.8.7' }, { log });
  routes = router.routes();
  listening = await listen(app, '127.0.0.1', 0);
  appClose = () => (app as unknown as { close(): void }).close();
  base = `http://127.0.0.1:${listening.port}`;
  const res = await fetch(base + '/extended/openapi.json');
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  doc = (await res.json()) as Json;
});

afterAll(async () => {
  listening?.close();
  appClose?.();
  await db?.drop();
});

function refs(v: unknown, out: string[] = []): string[] {
  if (Array.isArray(v)) v.forEach((x) => refs(x, out));
  else if (v && typeof v === 'object') {
    for (const [k, x] of Object.entries(v)) {
      if (k === '$ref' && typeof x === 'string') out.push(x);
      else refs(x, out);
    }
  }
  return out;
}

describe('GET /extended/openapi.json', () => {
  it('is an OpenAPI 3.1 document with info, tags and components', () => {
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.info.title).toBeTypeOf('string');
    expect(doc.info.version).toBe('9.8.7');
    expect(Object.keys(doc.paths).length).toBeGreaterThanOrEqual(19);
    expect(Object.keys(doc.components.schemas).length).toBeGreaterThan(10);
    const tagNames = new Set((doc.tags as { name: string }[]).map((t) => t.name));
    const operationIds = new Set<string>();
    for (const [p, item] of Object.entries<Json>(doc.paths)) {
      expect(p.startsWith('/'), p).toBe(true);
      for (const [method, op] of Object.entries<Json>(item)) {
        expect(['get', 'post', 'put', 'patch', 'delete']).toContain(method);
        expect(op.summary, `${method} ${p} summary`).toMatch(/\S/);
        expect(op.tags.length, `${p} tags`).toBeGreaterThan(0);
        for (const t of op.tags) expect(tagNames.has(t), `${p} tag ${t}`).toBe(true);
        expect(operationIds.has(op.operationId), `duplicate operationId ${op.operationId}`).toBe(false);
        operationIds.add(op.operationId);
        const statuses = Object.keys(op.responses);
        expect(statuses.some((s) => /^[23]\d\d$/.test(s)), `${p} has a success answer`).toBe(true);
      }
    }
  });

  it('documents every route of the router, and only those', () => {
    const routed = routes
      .filter((r) => !UNDOCUMENTED_ROUTES.includes(r.pattern))
      .map((r) => `${r.method.toLowerCase()} ${toOpenApi(r.pattern)}`)
      .sort();
    const all = Object.entries<Json>(doc.paths).flatMap(([p, item]) =>
      Object.entries<Json>(item).map(([m, op]) => ({ key: `${m} ${p}`, servedBy: op['x-served-by'] as string | undefined })),
    );
    const documented = all.filter((o) => !o.servedBy).map((o) => o.key).sort();
    expect(documented).toEqual(routed);
    // what the node proxy serves on the same app is described too, and marked as such
    expect(all.filter((o) => o.servedBy === 'node-proxy').map((o) => o.key).sort()).toEqual([
      'get /extended/v1/status/nodes',
      'get /v2/*',
      'post /v2/*',
    ]);
    expect(doc.jsonSchemaDialect).toBeUndefined();
    for (const must of [
      'get /extended',
      'get /extended/v2/blocks',
      'get /extended/v2/blocks/{height_or_hash}',
      'get /extended/v1/block',
      'get /extended/v1/block/by_burn_block_height/{burn_block_height}',
      'get /extended/v1/tx/multiple',
      'get /extended/v1/tx/mempool/stats',
      'get /extended/v1/tx/events',
      'get /extended/v1/contract/{contract_id}/events',
      'get /extended/v1/address/{principal}/mempool',
      'get /extended/v1/address/{principal}/{tx_id}/with_transfers',
    ]) {
      expect(documented).toContain(must);
    }
  });

  it('marks exactly the legacy endpoints deprecated (the reference marks them)', () => {
    const deprecated = Object.entries<Json>(doc.paths)
      .filter(([, item]) => item.get?.deprecated === true)
      .map(([p]) => p)
      .sort();
    expect(deprecated).toEqual([
      '/extended/v1/address/{principal}/balances',
      // the reference deprecates these two in favour of /extended/v2/addresses/{address}/transactions
      '/extended/v1/address/{principal}/transactions',
      '/extended/v1/address/{principal}/transactions_with_transfers',
      '/extended/v1/address/{principal}/{tx_id}/with_transfers',
      '/extended/v1/block',
      '/extended/v1/block/by_burn_block_hash/{burn_block_hash}',
      '/extended/v1/block/by_burn_block_height/{burn_block_height}',
      '/extended/v1/stx_supply/circulating/plain',
      '/extended/v1/stx_supply/legacy_format',
      '/extended/v1/stx_supply/total/plain',
      '/extended/v1/tx/block/{block_hash}',
      '/extended/v1/tx/block_height/{height}',
    ]);
  });

  it('declares every path parameter, with types, defaults and maxima of SPEC.md', () => {
    for (const [p, item] of Object.entries<Json>(doc.paths)) {
      const inPath = [...p.matchAll(/\{(\w+)\}/g)].map((m) => m[1]).sort();
      for (const op of Object.values<Json>(item)) {
        const params = (op.parameters ?? []) as Json[];
        const declared = params.filter((x) => x.in === 'path').map((x) => x.name).sort();
        expect(declared, p).toEqual(inPath);
        for (const x of params) {
          expect(x.schema, `${p} ${x.name}`).toBeTypeOf('object');
          if (x.in === 'path') expect(x.required).toBe(true);
        }
      }
    }
    const param = (p: string, name: string) => (doc.paths[p].get.parameters as Json[]).find((x) => x.name === name)!;
    const limits: [string, string, number, number][] = [
      ['/extended/v1/block', 'limit', 20, 30],
      ['/extended/v2/blocks', 'limit', 20, 30],
      ['/extended/v1/tx/events', 'limit', 20, 100],
      ['/extended/v1/tx/mempool', 'limit', 20, 50],
      ['/extended/v1/contract/{contract_id}/events', 'limit', 20, 50],
      ['/extended/v1/address/{principal}/mempool', 'limit', 20, 50],
      ['/extended/v1/tx/{tx_id}', 'event_limit', 20, 100],
    ];
    for (const [p, name, def, max] of limits) {
      const s = param(p, name).schema;
      expect([p, s.type, s.default, s.maximum, s.minimum]).toEqual([p, 'integer', def, max, 0]);
    }
    expect(param('/extended/v1/tx/multiple', 'tx_id')).toMatchObject({ required: true, explode: true, schema: { type: 'array' } });
    expect([...param('/extended/v1/tx/events', 'type').schema.items.enum].sort()).toEqual(
      ['fungible_token_asset', 'non_fungible_token_asset', 'smart_contract_log', 'stx_asset', 'stx_lock'],
    );
    expect(param('/extended/v1/contract/{contract_id}/events', 'unanchored').schema).toEqual({ default: false, type: 'boolean' });
  });

  it('gives every answer a schema; errors are {statusCode, error, message} (Rosetta: its error objects)', () => {
    const error = doc.components.schemas.Error;
    expect([...error.required].sort()).toEqual(['error', 'message', 'statusCode']);
    for (const [p, item] of Object.entries<Json>(doc.paths)) {
      for (const op of Object.values<Json>(item)) {
        for (const [status, r] of Object.entries<Json>(op.responses)) {
          expect(r.description, `${p} ${status}`).toMatch(/\S/);
          // BNS keeps the reference's `{error}` bodies: BnsError is `{error}` or Error
          // Rosetta: its error objects `{code, message, retriable}` or Error
          const errorRef = /^\/(v1|v2\/prices)\//.test(p)
            ? '#/components/schemas/BnsError'
            : p.startsWith('/rosetta/')
              ? '#/components/schemas/RosettaErrorResponse'
              : '#/components/schemas/Error';
          if (/^[45]/.test(status)) expect(r.content['application/json'].schema, `${p} ${status}`).toEqual({ $ref: errorRef });
          // a JSON answer is a named component (the plain-text supply figures are text/plain strings)
          if (status === '200' && p.startsWith('/extended/v') && !r.content['text/plain']) {
            expect(r.content['application/json'].schema.$ref, p).toMatch(/^#\/components\/schemas\//);
          }
          if (/^3/.test(status) && status !== '304') expect(r.headers.Location).toBeTruthy();
        }
        if ((op.parameters ?? []).some((x: Json) => x.in === 'query')) expect(op.responses['400'], `${p} documents its 400`).toBeTruthy();
      }
    }
    // SPEC.md's documented 404s
    for (const p of ['/extended/v1/tx/multiple', '/extended/v1/block/by_burn_block_height/{burn_block_height}', '/extended/v1/address/{principal}/{tx_id}/with_transfers']) {
      expect(doc.paths[p].get.responses['404'], p).toBeTruthy();
    }
  });

  it('has valid JSON Schema 2020-12 components, and every $ref resolves', () => {
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    addFormats.default(ajv);
    for (const r of refs(doc)) {
      expect(r).toMatch(/^#\/components\/schemas\//);
      expect(doc.components.schemas[r.split('/').pop()!], r).toBeTruthy();
    }
    for (const [name, s] of Object.entries<Json>(doc.components.schemas)) {
      expect(ajv.validateSchema(s), `${name}: ${ajv.errorsText(ajv.errors)}`).toBe(true);
    }
    ajv.addSchema({ ...doc, $id: 'https://stacks-pulse.test/openapi.json' });
    const v = ajv.compile({ $ref: 'https://stacks-pulse.test/openapi.json#/components/schemas/ServerStatus' });
    expect(v({ server_version: 'x', status: 'ready', pox_v1_unlock_height: null, pox_v2_unlock_height: 1, pox_v3_unlock_height: 2 })).toBe(true);
    expect(v({ server_version: 'x', status: 'ready' })).toBe(false); // missing pox heights
    const tx = ajv.compile({ $ref: 'https://stacks-pulse.test/openapi.json#/components/schemas/MempoolStats' });
    expect(tx({ tx_type_counts: {} })).toBe(false);
  });

  it('is served as YAML too, with the same content', async () => {
    const res = await fetch(base + '/extended/openapi.yaml');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/yaml/);
    const text = await res.text();
    expect(text).toMatch(/^openapi: 3\.1\.0$/m);
    expect(parseYaml(text)).toEqual(doc);
  });
});

describe('GET /docs', () => {
  it('serves a Swagger UI page whose assets are all local', async () => {
    const res = await fetch(base + '/docs');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    const html = await res.text();
    const assets = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]);
    expect(assets.length).toBeGreaterThanOrEqual(3);
    for (const a of assets) expect(a.startsWith('/docs/'), `${a} is local`).toBe(true);
    expect(html).not.toMatch(/https?:\/\//);
    const types: Record<string, RegExp> = { '.js': /^text\/javascript/, '.css': /^text\/css/, '.png': /^image\/png$/ };
    for (const a of assets) {
      const r = await fetch(base + a);
      expect(r.status, a).toBe(200);
      const ext = a.slice(a.lastIndexOf('.'));
      expect(r.headers.get('content-type'), a).toMatch(types[ext]);
      expect((await r.arrayBuffer()).byteLength, a).toBeGreaterThan(100);
    }
    const init = await (await fetch(base + '/docs/init.js')).text();
    expect(init).toContain("'/extended/openapi.json'");
    expect(init).toContain('validatorUrl: null');
  });

  it('answers 404 for files it does not serve', async () => {
    for (const p of ['/docs/package.json', '/docs/../package.json', '/docs/index.html', '/docs/swagger-ui.js.map']) {
      const r = await fetch(base + p);
      expect(r.status, p).toBe(404);
      const body = (await r.json()) as Json;
      expect(body.statusCode).toBe(404);
    }
  });
});

describe('the answer checker used by test/conformance/conformance.test.ts', () => {
  it('accepts real answers and rejects wrong bodies, undocumented statuses and non-JSON errors', async () => {
    const { answerChecker } = await import('../helpers/openapi-validate.js');
    const check = answerChecker(doc);
    const status = (await (await fetch(base + '/extended')).json()) as Json;
    expect(check('GET', '/extended', 200, status)).toBeUndefined();
    const { pox_v1_unlock_height: _drop, ...partial } = status;
    expect(check('GET', '/extended', 200, partial)).toMatch(/pox_v1_unlock_height/);
    expect(check('GET', '/extended', 200, { ...status, extra: 1 })).toMatch(/additional/);
    const blocks = (await (await fetch(base + '/extended/v1/block?limit=5')).json()) as Json;
    expect(check('GET', '/extended/v1/block?limit=5', 200, blocks)).toBeUndefined();
    expect(check('GET', '/extended/v1/block?limit=5', 200, { ...blocks, total: '0' })).toMatch(/total/);
    expect(check('GET', '/extended/v1/block', 418, blocks)).toMatch(/418 is not documented/);
    // static segments win over parameters: /tx/multiple is not /tx/{tx_id}
    const id = '0x' + '1'.repeat(64);
    expect(check('GET', `/extended/v1/tx/multiple?tx_id=${id}`, 200, { [id]: { found: false, result: { tx_id: id } } })).toBeUndefined();
    expect(check('GET', `/extended/v1/tx/multiple?tx_id=${id}`, 200, { [id]: { found: true, result: { tx_id: id } } })).toMatch(/multiple/);
    const notFound = (await (await fetch(base + '/extended/v1/nothing/here')).json()) as Json;
    expect(check('GET', '/extended/v1/nothing/here', 404, notFound)).toBeUndefined();
    expect(check('GET', '/extended/v1/nothing/here', 404, { message: 'x' })).toMatch(/error body/);
    expect(check('GET', '/extended/v1/nothing/here', 200, {})).toMatch(/no documented route/);
    const bad = (await (await fetch(base + '/extended/v1/block?limit=31')).json()) as Json;
    expect(check('GET', '/extended/v1/block?limit=31', 400, bad)).toBeUndefined();
  });
});

describe('documented parameters agree with the handlers', () => {
  const ADDRESS = 'ST1PQHQKV0RJXZFY1DGX8MNSNYVE3VGZJSRTPGZGM';
  const samples: Record<string, string> = {
    height_or_hash: 'latest',
    height: '1',
    burn_block_height: '1',
    burn_block_hash: '0x' + '0'.repeat(64),
    tenure_height: '1',
    hash: '0x' + '0'.repeat(64),
    block_hash: '0x' + '0'.repeat(64),
    network: 'mainnet',
    id: ADDRESS,
    tx_id: '0x' + '1'.repeat(64),
    principal: ADDRESS,
    contract_id: `${ADDRESS}.token`,
    // stacking
    address: ADDRESS,
    pox: 'pox4',
    pool_principal: ADDRESS,
    cycle_number: '1',
    signer_key: '0x02' + 'ab'.repeat(32),
    // BNS
    blockchain: 'stacks',
    name: 'muneeb.id',
    zoneFileHash: 'ab'.repeat(20),
    tld: 'id',
    // v3
    asset_identifier: `${ADDRESS}.token::ft`,
    // hooks
    uuid: '3f2504e0-4f89-11d3-9a0c-0305e82c3301',
  };
  /** Query that makes a request well-formed apart from the parameter under test. */
  const baseQuery: Record<string, Record<string, string>> = {
    '/extended/v1/tx/events': { address: ADDRESS },
    '/extended/v1/tx/multiple': { tx_id: samples.tx_id },
    '/extended/v1/tokens/nft/holdings': { principal: ADDRESS },
    '/extended/v1/tokens/nft/history': { asset_identifier: `${ADDRESS}.token::nft`, value: '0x01' },
    '/extended/v1/tokens/nft/mints': { asset_identifier: `${ADDRESS}.token::nft` },
    '/extended/v1/contract/by_trait': { trait_abi: '{"functions":[]}' },
    '/extended/v3/principals/{principal}/balance-changes': { tx_id: samples.tx_id },
  };

  function url(p: string, query: Record<string, string>): string {
    const path = p.replace(/\{(\w+)\}/g, (_m, n: string) => encodeURIComponent(samples[n]));
    const q = new URLSearchParams(query).toString();
    return base + path + (q ? '?' + q : '');
  }

  it('integer maxima and minima, enums and required parameters are what the handlers enforce', async () => {
    let checked = 0;
    for (const [p, item] of Object.entries<Json>(doc.paths)) {
      const op = item.get;
      if (!op) continue; // POST-only paths (fee_rate, Rosetta) take a body, no query parameters
      for (const param of (op.parameters ?? []) as Json[]) {
        if (param.in !== 'query') continue;
        const q = { ...baseQuery[p] };
        const s = param.schema;
        const probe = async (value: string | undefined, wantBadRequest: boolean) => {
          const query = { ...q };
          if (value === undefined) delete query[param.name];
          else query[param.name] = value;
          const r = await fetch(url(p, query), { redirect: 'manual' });
          const label = `${p}?${param.name}=${value}: ${r.status}`;
          if (wantBadRequest) {
            expect(r.status, label).toBe(400);
            expect(((await r.json()) as Json).message, label).toContain(param.name);
          } else if (r.status === 400 && /^\/v1\//.test(p)) {
            // BNS: a 400 about the resource (`{"error":"No such namespace"}`), not about the parameter
            const body = (await r.json()) as Json;
            expect(body.statusCode, label).toBeUndefined();
            expect(body.error, label).toMatch(/\S/);
          } else {
            expect(r.status, label).not.toBe(400);
            expect(r.status, label).toBeLessThan(500); // a value the schema takes is never a server error
            await r.arrayBuffer();
          }
          checked++;
        };
        if (s.type === 'integer') {
          if (s.maximum !== undefined) {
            await probe(String(s.maximum), false);
            await probe(String(s.maximum + 1), true);
          } else {
            // no maximum (offsets, heights): the largest safe integer is taken, whatever the SQL types behind it
            await probe(String(Number.MAX_SAFE_INTEGER), false);
          }
          if (s.minimum !== undefined) {
            await probe(String(s.minimum), false);
            await probe(String(s.minimum - 1), true);
          }
          await probe('abc', true);
        }
        if (s.type === 'boolean') {
          await probe('true', false);
          await probe('maybe', true);
        }
        if (Array.isArray(s.enum)) {
          for (const v of s.enum) await probe(String(v), false);
          await probe('bogus', true);
        }
        if (param.required) await probe(undefined, true);
      }
    }
    expect(checked).toBeGreaterThan(60);
  });
});
