/**
 * Hooks (predicates and webhooks, docs/hooks.md), each route needing an `x-api-key`; a key sees only its own hooks:
 *   POST   /extended/v1/hooks                       register a Chainhook specification (201, the secret shown once)
 *   GET    /extended/v1/hooks                       list
 *   GET    /extended/v1/hooks/:uuid                 one
 *   POST   /extended/v1/hooks/:uuid/pause           stop delivering (matches keep being recorded)
 *   POST   /extended/v1/hooks/:uuid/resume          deliver again, from where it paused
 *   DELETE /extended/v1/hooks/:uuid                 remove it and its deliveries
 *   GET    /extended/v1/hooks/:uuid/deliveries      deliveries, newest first, with each attempt
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { z } from 'zod';
import { endpoint, raw, notFound, badRequest, type EndpointInput } from '../../endpoint.js';
import { component } from '../../schemas/common.js';
import { Limit, Offset } from '../../schemas/params.js';
import { HttpError, json } from '../../../http/response.js';
import type { ApiContext } from '../../context.js';
import type { Sql } from '../../../store/sql.js';
import * as store from '../../../store/hooks.js';
import { HookSpec, storedPredicate } from '../../../hooks/predicate.js';
import { hostAllowed } from '../../../hooks/urls.js';
import { deliveryView, hookView } from '../../../views/hooks.js';

const Uuid = z.string().regex(/^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/, 'must be a UUID');

const Hook = component(
  'Hook',
  z.object({
    uuid: z.string(),
    name: z.string(),
    version: z.number(),
    chain: z.literal('stacks'),
    network: z.string(),
    status: z.enum(['active', 'paused', 'expired']),
    occurrences: z.number().describe('blocks matched so far'),
    predicate: z.record(z.string(), z.unknown()).describe('if_this and the options (start_block, end_block, expire_after_occurrence, …)'),
    then_that: z.object({ http_post: z.object({ url: z.string(), authorization_header: z.string().optional() }) }),
    history_evaluated: z.boolean().describe('false while the stored history from start_block is being evaluated'),
    created_at: z.string(),
    updated_at: z.string(),
  }),
);
const CreatedHook = component('CreatedHook', Hook.extend({ secret: z.string().describe('HMAC-SHA256 key of the x-stacks-pulse-signature header; shown only here') }));
const HookList = component('HookList', z.object({ limit: z.number(), offset: z.number(), total: z.number(), results: z.array(Hook) }));
const HookDeliveryList = component(
  'HookDeliveryList',
  z.object({
    limit: z.number(),
    offset: z.number(),
    total: z.number(),
    results: z.array(
      z.object({
        delivery_id: z.string(),
        action: z.string(),
        block_identifier: z.object({ index: z.number(), hash: z.string() }),
        status: z.string(),
        attempts: z.array(z.object({ attempt: z.number(), at: z.string(), status_code: z.number().nullable(), error: z.string().nullable(), ms: z.number() })),
        created_at: z.string(),
        delivered_at: z.string().nullable(),
        next_attempt_at: z.string().nullable(),
      }),
    ),
  }),
);
const Deleted = component('HookDeleted', z.object({ uuid: z.string(), deleted: z.literal(true) }));

/** The API key's name: every hook route needs one. */
function owner(req: EndpointInput<undefined, undefined, undefined>['req']): string {
  const name = req.locals.apiKeyName;
  if (typeof name !== 'string') throw new HttpError(401, 'Hooks need an API key: send it in the x-api-key header');
  return name;
}

function hooksOf(ctx: ApiContext): NonNullable<ApiContext['hooks']> {
  if (!ctx.hooks) throw new HttpError(503, 'Hooks are not available on this process');
  return ctx.hooks;
}

/** Hook routes write: they use the primary database (never a read replica). */
const primary = (ctx: ApiContext): Sql => hooksOf(ctx).sql;

const UuidParams = z.object({ uuid: Uuid });

async function found(ctx: ApiContext, key: string, uuid: string) {
  const h = await store.ownedHook(primary(ctx), key, uuid.toLowerCase());
  return h ?? notFound('Hook not found');
}

export const hookEndpoints = [
  endpoint({
    method: 'POST',
    path: '/extended/v1/hooks',
    operationId: 'create_hook',
    summary: 'Register a hook',
    description:
      'Takes a Chainhook predicate specification for Stacks (`{chain: "stacks", uuid, name, version, networks: {mainnet|testnet: {if_this, then_that: {http_post: {url, authorization_header}}, start_block, …}}}`), the network being the database\'s. ' +
      'Answers 201 with the hook and its `secret` (shown only here), the key of the HMAC-SHA256 signature each delivery carries. Needs an x-api-key.',
    tags: ['Hooks'],
    body: HookSpec,
    response: CreatedHook,
    responseDescription: 'The hook, created (status 201)',
    errors: [400, 409, 413, 503],
    cache: 'none',
    handler: async ({ body, req }, ctx) => {
      const key = owner(req);
      const cfg = hooksOf(ctx);
      const given = Object.keys(body.networks).filter((n) => body.networks[n as 'mainnet'] !== undefined) as ('mainnet' | 'testnet')[];
      let network: 'mainnet' | 'testnet';
      if (ctx.network) {
        if (!body.networks[ctx.network]) badRequest(`body/networks must have property '${ctx.network}' (this database holds ${ctx.network})`);
        network = ctx.network;
      } else if (given.length === 1) network = given[0];
      else badRequest('body/networks must name one network while the database has none yet');
      const spec = body.networks[network]!;
      const url = spec.then_that.http_post.url;
      if (!hostAllowed(url, cfg.allowedHosts)) badRequest(`body/networks/${network}/then_that/http_post/url: host not allowed (HOOKS_ALLOWED_HOSTS)`);
      if ((await store.countHooks(cfg.sql, key)) >= cfg.maxPerKey) {
        throw new HttpError(409, `This API key has reached its limit of ${cfg.maxPerKey} hooks (HOOKS_MAX_PER_KEY)`);
      }
      const secret = randomBytes(32).toString('hex');
      const row = await store.insertHook(cfg.sql, {
        uuid: (body.uuid ?? randomUUID()).toLowerCase(),
        owner: key,
        name: body.name,
        version: body.version ?? 1,
        network,
        predicate: storedPredicate(spec) as unknown as store.StoredPredicate,
        url,
        authorization_header: spec.then_that.http_post.authorization_header ?? null,
        secret,
      });
      if (!row) throw new HttpError(409, `A hook with uuid ${body.uuid} exists already`);
      cfg.kick?.();
      return raw(json(201, { ...hookView(row), secret }));
    },
  }),
  endpoint({
    method: 'GET',
    path: '/extended/v1/hooks',
    operationId: 'list_hooks',
    summary: 'List hooks',
    description: 'The hooks of the API key sent in x-api-key, oldest first.',
    tags: ['Hooks'],
    query: z.object({ limit: Limit(20, 200), offset: Offset() }),
    response: HookList,
    responseDescription: 'Hooks',
    errors: [400, 503],
    cache: 'none',
    handler: async ({ query, req }, ctx) => {
      const key = owner(req);
      const { total, rows } = await store.ownedHooks(primary(ctx), key, query.limit, query.offset);
      return { limit: query.limit, offset: query.offset, total, results: rows.map(hookView) };
    },
  }),
  endpoint({
    method: 'GET',
    path: '/extended/v1/hooks/:uuid',
    operationId: 'get_hook',
    summary: 'Get a hook',
    tags: ['Hooks'],
    params: UuidParams,
    response: Hook,
    responseDescription: 'The hook',
    errors: [400, 404, 503],
    cache: 'none',
    handler: async ({ params, req }, ctx) => hookView(await found(ctx, owner(req), params.uuid)),
  }),
  endpoint({
    method: 'POST',
    path: '/extended/v1/hooks/:uuid/pause',
    operationId: 'pause_hook',
    summary: 'Pause a hook',
    description: 'Deliveries stop; blocks that match keep being recorded and are delivered, in order, after resume.',
    tags: ['Hooks'],
    params: UuidParams,
    response: Hook,
    responseDescription: 'The hook',
    errors: [400, 404, 503],
    handler: async ({ params, req }, ctx) => {
      const h = await store.setHookPaused(primary(ctx), owner(req), params.uuid.toLowerCase(), true);
      return hookView(h ?? notFound('Hook not found'));
    },
  }),
  endpoint({
    method: 'POST',
    path: '/extended/v1/hooks/:uuid/resume',
    operationId: 'resume_hook',
    summary: 'Resume a hook',
    tags: ['Hooks'],
    params: UuidParams,
    response: Hook,
    responseDescription: 'The hook',
    errors: [400, 404, 503],
    handler: async ({ params, req }, ctx) => {
      const h = await store.setHookPaused(primary(ctx), owner(req), params.uuid.toLowerCase(), false);
      hooksOf(ctx).kick?.();
      return hookView(h ?? notFound('Hook not found'));
    },
  }),
  endpoint({
    method: 'DELETE',
    path: '/extended/v1/hooks/:uuid',
    operationId: 'delete_hook',
    summary: 'Delete a hook',
    description: 'Removes the hook and its pending deliveries.',
    tags: ['Hooks'],
    params: UuidParams,
    response: Deleted,
    responseDescription: 'Deleted',
    errors: [400, 404, 503],
    handler: async ({ params, req }, ctx) => {
      const uuid = params.uuid.toLowerCase();
      if (!(await store.deleteHook(primary(ctx), owner(req), uuid))) notFound('Hook not found');
      return { uuid, deleted: true as const };
    },
  }),
  endpoint({
    method: 'GET',
    path: '/extended/v1/hooks/:uuid/deliveries',
    operationId: 'get_hook_deliveries',
    summary: 'Deliveries of a hook',
    description: 'Newest first; each with its attempts (time, HTTP status, error, duration).',
    tags: ['Hooks'],
    params: UuidParams,
    query: z.object({ limit: Limit(20, 200), offset: Offset() }),
    response: HookDeliveryList,
    responseDescription: 'Deliveries',
    errors: [400, 404, 503],
    cache: 'none',
    handler: async ({ params, query, req }, ctx) => {
      const h = await found(ctx, owner(req), params.uuid);
      const { total, rows } = await store.hookDeliveries(primary(ctx), h.id, query.limit, query.offset);
      return { limit: query.limit, offset: query.offset, total, results: rows.map(deliveryView) };
    },
  }),
];
