/**
 * Checks answers against the OpenAPI document a running API serves (GET /extended/openapi.json): the request path is
 * matched to its documented path (static segments win over parameters, as in the router), the answer's status must be
 * documented for it, and a JSON body must validate (ajv, JSON Schema draft 2020-12) against the schema published for
 * that status. Requests no route matches must be JSON errors.
 */
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';

type Json = Record<string, any>;

const DOC_ID = 'https://stacks-pulse.invalid/openapi.json';

/**
 * Returns a description of what is wrong with the answer, or undefined when it matches the document. `contentType`
 * (optional) is the answer's media type: a non-JSON answer must be one the document lists for that status.
 */
export type AnswerCheck = (method: string, request: string, status: number, body: unknown, contentType?: string | null) => string | undefined;

interface Template {
  path: string;
  segments: string[];
  item: Json;
}

function absolutize(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(absolutize);
  if (v && typeof v === 'object') {
    const out: Json = {};
    for (const [k, x] of Object.entries(v)) out[k] = k === '$ref' && typeof x === 'string' && x.startsWith('#') ? DOC_ID + x : absolutize(x);
    return out;
  }
  return v;
}

export function answerChecker(doc: Json): AnswerCheck {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats.default(ajv);
  ajv.addSchema({ ...doc, $id: DOC_ID });
  const compiled = new Map<unknown, ValidateFunction>();
  const validator = (schema: Json): ValidateFunction => {
    let v = compiled.get(schema);
    if (!v) {
      v = ajv.compile(absolutize(schema) as Json);
      compiled.set(schema, v);
    }
    return v;
  };
  const errorSchema = { $ref: '#/components/schemas/Error' };

  const templates: Template[] = Object.entries<Json>(doc.paths).map(([p, item]) => ({
    path: p,
    segments: p.split('/').slice(1),
    item,
  }));

  function match(path: string): Template | undefined {
    let p = path;
    if (p.length > 1 && p.endsWith('/')) p = p.slice(0, -1);
    let segs: string[];
    try {
      segs = p.split('/').slice(1).map(decodeURIComponent);
    } catch {
      return undefined;
    }
    let best: { t: Template; rank: string } | undefined;
    for (const t of templates) {
      if (t.segments.length !== segs.length) continue;
      let rank = '';
      let ok = true;
      for (let i = 0; i < segs.length && ok; i++) {
        const s = t.segments[i];
        if (/^\{\w+\}$/.test(s)) {
          ok = segs[i] !== '';
          rank += '1';
        } else {
          ok = s === segs[i];
          rank += '0';
        }
      }
      if (ok && (!best || rank < best.rank)) best = { t, rank };
    }
    return best?.t;
  }

  const validate = (schema: Json, body: unknown, what: string): string | undefined => {
    const v = validator(schema);
    if (v(body)) return undefined;
    const errs = (v.errors ?? []).slice(0, 3).map((e) => `${e.instancePath || '/'} ${e.message ?? 'invalid'} ${JSON.stringify(e.params)}`);
    return `${what}: ${errs.join('; ') || 'invalid'}`;
  };

  return (method, request, status, body, contentType) => {
    const path = request.split('?')[0];
    const t = match(path);
    const op = t?.item[method.toLowerCase()];
    if (!t || !op) {
      if (![400, 401, 404, 429].includes(status)) return `no documented route, and status ${status} is not an error`;
      return validate(errorSchema, body, 'error body');
    }
    const r = op.responses?.[String(status)];
    if (!r) return `status ${status} is not documented for ${method} ${t.path}`;
    const media = (contentType ?? '').split(';')[0].trim().toLowerCase();
    if (media && media !== 'application/json' && body !== null && body !== '') {
      return r.content?.[media] ? undefined : `status ${status} of ${t.path} documents no ${media} body`;
    }
    const schema = r.content?.['application/json']?.schema;
    if (!schema) return body === null || body === '' ? undefined : `status ${status} of ${t.path} documents no body`;
    return validate(schema, body, `${status} body of ${method} ${t.path}`);
  };
}

/** Fetches the document the API at `api` serves and returns its answer checker. */
export async function fetchAnswerChecker(api: string): Promise<AnswerCheck> {
  const res = await fetch(api + '/extended/openapi.json');
  if (res.status !== 200) throw new Error(`GET /extended/openapi.json → ${res.status}`);
  return answerChecker((await res.json()) as Json);
}
