/**
 * The OpenAPI 3.1 document of the REST API, built from the zod schemas (src/api/schemas) with zod's own
 * `z.toJSONSchema` (JSON Schema draft 2020-12, which OpenAPI 3.1 uses as its schema dialect).
 */
import { z } from 'zod';
import { stringify as toYaml } from 'yaml';
import { components, ErrorResponse } from './schemas/common.js';
import type { Endpoint, ErrorStatus } from './endpoint.js';

type Json = Record<string, unknown>;

export interface OpenApiDocument {
  openapi: '3.1.0';
  info: { title: string; version: string; description: string };
  tags: { name: string; description: string }[];
  paths: Record<string, Record<string, Json>>;
  security: Record<string, string[]>[];
  components: { schemas: Record<string, Json>; securitySchemes: Record<string, Json> };
}

const COMPONENT_PREFIX = '#/components/schemas/';
const MAX_SAFE = Number.MAX_SAFE_INTEGER;

/** Drops zod's implicit safe-integer bounds (noise in a document: every integer has them). */
function dropSafeIntBounds(ctx: { jsonSchema: Json }): void {
  const s = ctx.jsonSchema;
  if (s.minimum === -MAX_SAFE) delete s.minimum;
  if (s.maximum === MAX_SAFE) delete s.maximum;
}

/** '/extended/v1/tx/:tx_id' → '/extended/v1/tx/{tx_id}' */
export function openApiPath(routerPattern: string): string {
  return routerPattern.replace(/:([A-Za-z_][A-Za-z0-9_]*)/g, '{$1}');
}

function componentId(schema: z.ZodType): string {
  const meta = components.get(schema);
  if (!meta) throw new Error('an operation response schema must be a registered component (see schemas/common.ts)');
  return meta.id;
}

function paramSchema(s: z.ZodType): { schema: Json; description?: string; required: boolean } {
  const json = z.toJSONSchema(s, { io: 'input', unrepresentable: 'any', override: dropSafeIntBounds }) as Json;
  delete json.$schema;
  const description = typeof json.description === 'string' ? json.description : undefined;
  delete json.description;
  return { schema: json, description, required: !s.safeParse(undefined).success };
}

function parameters(op: Endpoint): Json[] {
  const out: Json[] = [];
  for (const [where, obj] of [['path', op.params], ['query', op.query]] as const) {
    if (!obj) continue;
    for (const [name, s] of Object.entries(obj.shape)) {
      const p = paramSchema(s as z.ZodType);
      const param: Json = { name, in: where, required: where === 'path' ? true : p.required };
      if (p.description) param.description = p.description;
      param.schema = p.schema;
      if (p.schema.type === 'array') {
        param.style = 'form';
        param.explode = true;
      }
      out.push(param);
    }
  }
  return out;
}

const ERROR_DESCRIPTIONS: Record<ErrorStatus | 401 | 429, string> = {
  400: 'Malformed parameter (the message names it)',
  401: 'The `x-api-key` header holds an unknown or revoked key',
  404: 'Not found',
  405: 'Method not allowed',
  409: 'Conflict',
  413: 'Request body too large',
  500: 'Internal error',
  502: 'The node broke the connection',
  504: 'The node did not answer in time',
  429: 'Rate limit exceeded: wait Retry-After seconds, or send an API key (x-api-key) for a higher limit',
  503: 'The database (or, for node calls, every node) is unreachable; retry later',
};

/** Answers any route may give: the access check runs before every handler. */
const ACCESS_ERRORS = [401, 429] as const;

function jsonContent(ref: string): Json {
  return { 'application/json': { schema: { $ref: COMPONENT_PREFIX + ref } } };
}

function responses(op: Endpoint): Json {
  const out: Json = {};
  const etag = op.cachePolicy !== 'none';
  if (op.response) {
    out['200'] = {
      description: op.responseDescription ?? 'OK',
      ...(etag ? { headers: { ETag: { description: 'Changes whenever the chain or mempool state changes', schema: { type: 'string' } } } } : {}),
      content: jsonContent(componentId(op.response)),
    };
  }
  if (op.text) out['200'] = { description: op.text.description, content: { [op.text.contentType]: { schema: { type: 'object' } } } };
  if (op.redirect) {
    out[String(op.redirect.status)] = {
      description: op.redirect.description,
      headers: { Location: { description: 'Where to go', schema: { type: 'string' } } },
    };
  }
  if (etag) out['304'] = { description: 'Not modified (`If-None-Match` holds the current ETag)' };
  const errorRef = componentId(op.errorResponse ?? ErrorResponse);
  const statuses = [...new Set([...(op.errors ?? []), ...ACCESS_ERRORS])].sort((a, b) => a - b);
  for (const status of statuses) {
    const r: Json = { description: ERROR_DESCRIPTIONS[status], content: jsonContent(errorRef) };
    if (status === 503 || status === 429) r.headers = { 'Retry-After': { description: 'Seconds', schema: { type: 'integer' } } };
    out[String(status)] = r;
  }
  return out;
}

function bodySchema(s: z.ZodType): Json {
  const meta = components.get(s);
  if (meta) return { $ref: COMPONENT_PREFIX + meta.id };
  const json = z.toJSONSchema(s, { io: 'input', unrepresentable: 'any', override: dropSafeIntBounds }) as Json;
  delete json.$schema;
  return json;
}

function componentSchemas(): Record<string, Json> {
  const all = z.toJSONSchema(components, {
    uri: (id) => COMPONENT_PREFIX + id,
    unrepresentable: 'any',
    override: dropSafeIntBounds,
  }) as { schemas: Record<string, Json> };
  const out: Record<string, Json> = {};
  for (const name of Object.keys(all.schemas).sort()) {
    const { $schema: _s, $id: _i, ...rest } = all.schemas[name];
    out[name] = rest;
  }
  return out;
}

/** A tag of the document: the groups endpoints name in `tags`, in the order the document lists them. */
export interface OpenApiTag {
  name: string;
  description: string;
}

/** What the document describes: the declared endpoints (src/api/endpoints.ts) and their tags. */
export interface OpenApiSource {
  endpoints: readonly Endpoint[];
  tags: readonly OpenApiTag[];
}

/** Builds the document of `source` (pure; a few milliseconds). */
export function buildOpenApiDocument(opts: { version: string } & OpenApiSource): OpenApiDocument {
  const paths: OpenApiDocument['paths'] = {};
  for (const op of opts.endpoints) {
    if (op.hidden) continue;
    const p = openApiPath(op.path);
    const entry: Json = {
      operationId: op.operationId,
      summary: op.summary,
      ...(op.description ? { description: op.description } : {}),
      tags: op.tags,
      ...(op.deprecated ? { deprecated: true } : {}),
    };
    const ps = parameters(op);
    if (ps.length) entry.parameters = ps;
    if (op.body) entry.requestBody = { required: true, content: { 'application/json': { schema: bodySchema(op.body) } } };
    entry.responses = responses(op);
    if (op.servedBy) entry['x-served-by'] = op.servedBy;
    const methods = op.method === 'ANY' ? ['get', 'post'] : [op.method.toLowerCase()];
    for (const m of methods) (paths[p] ??= {})[m] = { ...entry, operationId: methods.length > 1 ? `${op.operationId}_${m}` : op.operationId };
  }
  const doc: OpenApiDocument = {
    openapi: '3.1.0',
    info: {
      title: 'stacks-pulse API',
      version: opts.version,
      description:
        'Real-time data API for the Stacks blockchain. The `/extended` endpoints answer like the public Stacks Blockchain ' +
        'API. Errors are always JSON `{statusCode, error, message}`. Amounts are decimal strings; hashes are 0x-prefixed ' +
        'lower-case hex.',
    },
    tags: opts.tags.map((t) => ({ ...t })),
    paths,
    // the key is optional: anonymous calls are served under the anonymous rate limit
    security: [{}, { apiKey: [] }],
    components: {
      schemas: componentSchemas(),
      securitySchemes: {
        apiKey: { type: 'apiKey', in: 'header', name: 'x-api-key', description: 'Optional API key for higher rate limits' },
      },
    },
  };
  // plain data only (no shared references: the YAML stays alias-free)
  return JSON.parse(JSON.stringify(doc)) as OpenApiDocument;
}

/** The document as served: JSON text and YAML text, built once per version. */
export function openApiTexts(version: string, source: OpenApiSource): { json: string; yaml: string; doc: OpenApiDocument } {
  const doc = buildOpenApiDocument({ version, ...source });
  return { doc, json: JSON.stringify(doc), yaml: toYaml(doc, { aliasDuplicateObjects: false, lineWidth: 0 }) };
}
