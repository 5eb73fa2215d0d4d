/** GET /health (liveness) and GET /ready (readiness) for load balancers and orchestrators; never rate limited. */
import { z } from 'zod';
import { endpoint, raw } from '../endpoint.js';
import { json } from '../../http/response.js';
import { component } from '../schemas/common.js';

const HealthResponse = component('Health', z.object({ status: z.literal('ok') }));

const ReadinessCheck = z.object({
  ok: z.boolean(),
  message: z.string().optional().describe('why the check failed'),
  lag_ms: z.number().int().nullable().optional().describe('replica: milliseconds behind the primary'),
});

const ReadyResponse = component(
  'Readiness',
  z.object({
    status: z.enum(['ready', 'not ready']),
    failed: z.array(z.string()).describe('names of the checks that failed'),
    checks: z
      .record(z.string(), ReadinessCheck)
      .describe('database, migrations, and when configured replica (DATABASE_READ_URL) and redis (REDIS_URL)'),
  }),
);

const NO_STORE = { 'cache-control': 'no-store' };

export const healthEndpoints = [
  endpoint({
    method: 'GET',
    path: '/health',
    operationId: 'get_health',
    summary: 'Liveness',
    description: 'Answers 200 while the process runs; it checks nothing else. Never rate limited. Not part of the reference API.',
    tags: ['Info'],
    hidden: true, // for load balancers (docs/operations.md); not an API a client calls
    response: HealthResponse,
    responseDescription: 'The process runs',
    cache: 'none',
    handler: () => raw(json(200, { status: 'ok' }, NO_STORE)),
  }),
  endpoint({
    method: 'GET',
    path: '/ready',
    operationId: 'get_ready',
    summary: 'Readiness',
    description:
      'Whether this process should receive traffic: migrations applied, database reachable, read replica reachable and ' +
      'within REPLICA_MAX_LAG_MS (with DATABASE_READ_URL), Redis connected (with REDIS_URL). 200 when every check ' +
      'passes, 503 with the same body otherwise; `failed` names the checks that failed. Never rate limited. Not part ' +
      'of the reference API.',
    tags: ['Info'],
    hidden: true, // for load balancers (docs/operations.md); not an API a client calls
    response: ReadyResponse,
    responseDescription: 'Every check passed',
    errors: [503],
    cache: 'none',
    handler: async (_input, ctx) => {
      const report = ctx.readiness ? await ctx.readiness() : { status: 'ready' as const, failed: [], checks: {} };
      return raw(json(report.status === 'ready' ? 200 : 503, report, NO_STORE));
    },
  }),
];
