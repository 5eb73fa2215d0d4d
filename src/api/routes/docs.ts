/**
 * The API description and its human page:
 *   GET /extended/openapi.json, /extended/openapi.yaml   the OpenAPI 3.1 document (src/api/openapi.ts)
 *   GET /docs                                          Swagger UI rendering it
 *   GET /docs/<file>                                   Swagger UI's files, from node_modules/swagger-ui-dist (no CDN)
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import type { Router } from '../../http/router.js';
import { httpError, JSON_CONTENT_TYPE, type HttpResponse } from '../../http/response.js';
import type { ApiContext } from '../context.js';
import { openApiTexts, type OpenApiSource } from '../openapi.js';
import { endpoint, raw } from '../endpoint.js';

/** The swagger-ui-dist files the page needs, with their content types. */
const STATIC_FILES: Record<string, string> = {
  'swagger-ui.css': 'text/css; charset=utf-8',
  'swagger-ui-bundle.js': 'text/javascript; charset=utf-8',
  'favicon-32x32.png': 'image/png',
  'favicon-16x16.png': 'image/png',
};

const PAGE = `<!DOCTYPE html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>stacks-pulse API</title>
  <link rel="stylesheet" href="/docs/swagger-ui.css">
  <link rel="icon" type="image/png" href="/docs/favicon-32x32.png" sizes="32x32">
  <link rel="icon" type="image/png" href="/docs/favicon-16x16.png" sizes="16x16">
  <style>body { margin: 0; }</style>
</head>
<body>
  <div id="swagger-ui"></div>
  <script src="/docs/swagger-ui-bundle.js"></script>
  <script src="/docs/init.js"></script>
</body>
</html>
`;

// validatorUrl null: Swagger UI would otherwise send the document to an external validator.
const INIT_JS = `window.ui = SwaggerUIBundle({
  url: '/extended/openapi.json',
  dom_id: '#swagger-ui',
  deepLinking: true,
  validatorUrl: null,
  presets: [SwaggerUIBundle.presets.apis],
  layout: 'BaseLayout',
});
`;

let swaggerDir: string | undefined;
function swaggerUiDir(): string {
  swaggerDir ??= path.dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
  return swaggerDir;
}

const fileCache = new Map<string, Buffer>();
function staticFile(name: string): Buffer {
  let b = fileCache.get(name);
  if (!b) {
    b = readFileSync(path.join(swaggerUiDir(), name));
    fileCache.set(name, b);
  }
  return b;
}

/** Semver of the API from "stacks-pulse v0.1.0". */
function apiVersion(serverVersion: string): string {
  return /v(\d[^\s]*)$/.exec(serverVersion)?.[1] ?? serverVersion;
}

/**
 * The OpenAPI document itself, as two declared endpoints; `source` gives the endpoints and tags it describes (read
 * when the document is first asked for, so the list can include these two).
 */
export function openApiEndpoints(source: () => OpenApiSource) {
  return [
    endpoint({
      method: 'GET',
      path: '/extended/openapi.json',
      operationId: 'get_openapi_json',
      summary: 'This OpenAPI 3.1 document (JSON)',
      tags: ['Info'],
      text: { contentType: 'application/json', description: 'The OpenAPI document' },
      cache: 'none',
      handler: (_input, ctx) =>
        raw({
          status: 200,
          headers: { 'content-type': JSON_CONTENT_TYPE, 'cache-control': 'public, max-age=300' },
          body: documentTexts(ctx, source).json,
        }),
    }),
    endpoint({
      method: 'GET',
      path: '/extended/openapi.yaml',
      operationId: 'get_openapi_yaml',
      summary: 'This OpenAPI 3.1 document (YAML)',
      tags: ['Info'],
      text: { contentType: 'application/yaml', description: 'The OpenAPI document' },
      cache: 'none',
      handler: (_input, ctx) =>
        raw({
          status: 200,
          headers: { 'content-type': 'application/yaml; charset=utf-8', 'cache-control': 'public, max-age=300' },
          body: documentTexts(ctx, source).yaml,
        }),
    }),
  ];
}

const texts = new Map<string, ReturnType<typeof openApiTexts>>();
function documentTexts(ctx: ApiContext, source: () => OpenApiSource): ReturnType<typeof openApiTexts> {
  const version = apiVersion(ctx.serverVersion);
  let t = texts.get(version);
  if (!t) texts.set(version, (t = openApiTexts(version, source())));
  return t;
}

/** The human page and Swagger UI's files (not in the document: not part of the API). */
export function registerDocsPage(router: Router): void {
  router.get('/docs', (): HttpResponse => ({
    status: 200,
    headers: { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'public, max-age=300' },
    body: PAGE,
  }));
  router.get('/docs/*', (req): HttpResponse => {
    const name = req.params['*'];
    if (name === 'init.js') {
      return { status: 200, headers: { 'content-type': 'text/javascript; charset=utf-8', 'cache-control': 'public, max-age=300' }, body: INIT_JS };
    }
    const type = STATIC_FILES[name];
    if (!type) return httpError(404, `Route ${req.method}:${req.path} not found`);
    return { status: 200, headers: { 'content-type': type, 'cache-control': 'public, max-age=86400' }, body: staticFile(name) };
  });
}
