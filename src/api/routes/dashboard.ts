/**
 * The live dashboard, a static page of the API process (no CDN, no build step):
 *   GET /dashboard                            web/dashboard/index.html
 *   GET /dashboard/app.js, /dashboard/style.css   the page's script and style (web/dashboard/)
 *   GET /dashboard/vendor/socket.io.min.js    the Socket.IO client (node_modules/socket.io-client/dist; the push
 *                                             server runs with serveClient off, so it is served here)
 *   GET /dashboard/vendor/chart.umd.min.js    Chart.js's UMD build (node_modules/chart.js/dist)
 * Files are read once, on first use, and kept in memory. Only the names listed here are served.
 */
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Router } from '../../http/router.js';
import { httpError, type HttpResponse } from '../../http/response.js';

const HTML = 'text/html; charset=utf-8';
const JS = 'text/javascript; charset=utf-8';
const CSS = 'text/css; charset=utf-8';

interface StaticFile {
  type: string;
  /** absolute path, resolved on first use */
  locate(): string;
  /** cache-control: the page's own files are revalidated (they change with the service), vendor files are cached */
  cacheControl: string;
}

/** The repository's web/dashboard folder: searched upwards from this module (src/…, dist/src/… or a test build). */
let webDir: string | undefined;
export function dashboardDir(): string {
  if (webDir) return webDir;
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 6; i++) {
    const candidate = path.join(dir, 'web', 'dashboard');
    if (existsSync(path.join(candidate, 'index.html'))) return (webDir = candidate);
    dir = path.dirname(dir);
  }
  throw new Error('web/dashboard/index.html not found above ' + fileURLToPath(import.meta.url));
}

const require = createRequire(import.meta.url);
const packageDir = (name: string, entry: string) => path.dirname(require.resolve(`${name}/${entry}`));

const OWN = 'no-cache';
const VENDOR = 'public, max-age=86400';

const FILES: Record<string, StaticFile> = {
  '': { type: HTML, locate: () => path.join(dashboardDir(), 'index.html'), cacheControl: OWN },
  'app.js': { type: JS, locate: () => path.join(dashboardDir(), 'app.js'), cacheControl: OWN },
  'style.css': { type: CSS, locate: () => path.join(dashboardDir(), 'style.css'), cacheControl: OWN },
  'vendor/socket.io.min.js': {
    type: JS,
    locate: () => path.join(packageDir('socket.io-client', 'package.json'), 'dist', 'socket.io.min.js'),
    cacheControl: VENDOR,
  },
  'vendor/chart.umd.min.js': {
    // chart.js exports only its entry points: its main entry lives in dist/, beside the UMD build
    type: JS,
    locate: () => path.join(path.dirname(require.resolve('chart.js')), 'chart.umd.min.js'),
    cacheControl: VENDOR,
  },
};

const contents = new Map<string, Buffer>();

function serve(name: string, notFound: () => HttpResponse): HttpResponse {
  const f = FILES[name];
  if (!f) return notFound();
  let body = contents.get(name);
  if (!body) {
    try {
      body = readFileSync(f.locate());
    } catch {
      // e.g. a production install without socket.io-client: say what is missing rather than a bare 500
      return httpError(404, `Dashboard file ${name || 'index.html'} is not installed`);
    }
    contents.set(name, body);
  }
  return { status: 200, headers: { 'content-type': f.type, 'cache-control': f.cacheControl }, body };
}

/** Route patterns registered here (listed in UNDOCUMENTED_ROUTES: they are a page, not API operations). */
export const DASHBOARD_ROUTES = ['/dashboard', '/dashboard/*'] as const;

export function registerDashboardRoutes(router: Router): void {
  router.get('/dashboard', (req) => serve('', () => httpError(404, `Route ${req.method}:${req.path} not found`)));
  router.get('/dashboard/*', (req) =>
    serve(req.params['*'] ?? '', () => httpError(404, `Route ${req.method}:${req.path} not found`)),
  );
}
