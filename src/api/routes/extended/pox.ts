/**
 * PoX: GET /extended/v1/{pox2,pox3,pox4}/events, /tx/{tx_id}, /stacker/{principal}, /{pool_principal}/delegations;
 * the legacy /extended/v1/pox<N>_events/… redirects; /extended/v2/pox/cycles….
 */
import { z } from 'zod';
import { LABEL, endpoint, notFound, raw } from '../../endpoint.js';
import { httpError, redirect } from '../../../http/response.js';
import { LoosePrincipalParam, Unanchored, paging } from '../../schemas/params.js';
import { PoolDelegationList, PoxEventList, PoxEventResults } from '../../schemas/pox.js';
import { poolDelegations, poxEventsJson } from '../../serialize-pox.js';
import { codec } from '../../../chain/native.js';
import { chainTip } from '../../../store/chain-tip.js';
import * as pox from '../../../store/pox.js';

const PoxParam = z
  .enum(['pox2', 'pox3', 'pox4'], {
    error: `${LABEL} must be equal to constant, ${LABEL} must be equal to constant, ${LABEL} must be equal to constant, ${LABEL} must match a schema in anyOf`,
  })
  .describe('The PoX contract version: `pox2`, `pox3` or `pox4`');

/** A real principal: a c32 address with a valid checksum, optionally with a contract name (the reference's isValidPrincipal). */
export function isValidPrincipal(p: string): boolean {
  const [addr, name, ...rest] = p.split('.');
  if (rest.length) return false;
  if (name !== undefined && !/^[a-zA-Z]([a-zA-Z0-9]|[-_]){0,127}$/.test(name)) return false;
  try {
    return codec.isValidStacksAddress(addr);
  } catch {
    return false;
  }
}

const StackerParam = LoosePrincipalParam(`${LABEL} is not a valid STX address`).refine(isValidPrincipal, {
  message: `${LABEL} is not a valid STX address`,
});

const PoolParam = z
  .string()
  .refine(isValidPrincipal, { message: `${LABEL} is an invalid STX address` })
  .describe('Principal of the stacking pool (the delegate)');

/** A tx id as the reference's hex check accepts it: `0x` and whole bytes of hex. */
const PoxTxId = z
  .string()
  .regex(/^0x([0-9a-fA-F]{2})*$/, { message: `${LABEL} must be a 0x-prefixed hex string` })
  .transform((s) => s.toLowerCase())
  .describe('Transaction id (0x-prefixed hex)');

const LEGACY_NOTE = 'Legacy prefix: sub-paths of `/extended/v1/pox4_events/` redirect to `/extended/v1/pox4/`.';

/** `/extended/v1/pox<N>_events/<rest>`: the reference rewrites `pox4_events/` to `pox4/` and redirects (others to themselves). */
const legacyEndpoints = Array.from({ length: 10 }, (_, n) =>
  endpoint({
    method: 'GET',
    path: `/extended/v1/pox${n}_events/*`,
    operationId: `redirect_pox${n}_events`,
    summary: 'Legacy PoX events prefix',
    description: LEGACY_NOTE,
    tags: ['Stacking'],
    hidden: true,
    redirect: { status: 302, description: 'The same path under /extended/v1/pox4/' },
    cache: 'none',
    handler: ({ req }) => {
      if (!req.params['*']) {
        return raw(httpError(404, `Route ${req.method}:${req.path}${req.rawQuery ? '?' + req.rawQuery : ''} not found`));
      }
      const url = req.path + (req.rawQuery ? '?' + req.rawQuery : '');
      return raw(redirect(302, url.replace(/\/(pox4)_events(\/|$)/, (_m, p1: string, p2: string) => (p2 === '/' ? `/${p1}/` : `/${p1}/events`))));
    },
  }),
);

export const poxEndpoints = [
  endpoint({
    method: 'GET',
    path: '/extended/v1/:pox/events',
    operationId: 'get_pox_events',
    summary: 'Latest PoX events',
    description: 'Decoded print events of the boot PoX contract of that version, newest first.',
    tags: ['Stacking'],
    params: z.object({ pox: PoxParam }),
    query: z.object(paging(96, 200)),
    response: PoxEventList,
    responseDescription: 'A page of PoX events',
    errors: [400, 503],
    handler: async ({ params, query }, { sql }) => {
      const rows = await pox.poxEvents(sql, params.pox, query);
      return { limit: query.limit, offset: query.offset, results: poxEventsJson(rows) };
    },
  }),
  endpoint({
    method: 'GET',
    path: '/extended/v1/:pox/tx/:tx_id',
    operationId: 'get_pox_events_by_tx',
    summary: 'PoX events of a transaction',
    tags: ['Stacking'],
    params: z.object({ pox: PoxParam, tx_id: PoxTxId }),
    response: PoxEventResults,
    responseDescription: 'The PoX events of the transaction',
    errors: [400, 404, 503],
    handler: async ({ params }, { sql }) => {
      if (!(await pox.txExists(sql, params.tx_id))) notFound('could not find transaction by ID');
      return { results: poxEventsJson(await pox.poxEventsOfTx(sql, params.pox, params.tx_id)) };
    },
  }),
  endpoint({
    method: 'GET',
    path: '/extended/v1/:pox/stacker/:principal',
    operationId: 'get_pox_events_by_stacker',
    summary: 'PoX events of a stacker',
    tags: ['Stacking'],
    params: z.object({ pox: PoxParam, principal: StackerParam }),
    response: PoxEventResults,
    responseDescription: 'The PoX events of the stacker',
    errors: [400, 503],
    handler: async ({ params }, { sql }) => ({ results: poxEventsJson(await pox.poxEventsOfStacker(sql, params.pox, params.principal)) }),
  }),
  endpoint({
    method: 'GET',
    path: '/extended/v1/:pox/:pool_principal/delegations',
    operationId: 'get_pool_delegations',
    summary: 'Stacking pool members',
    description:
      'The stackers whose newest delegation to this pool (at the given height, after `after_block`) is a delegate-stx ' +
      'not revoked and not yet expired, newest first.',
    tags: ['Stacking'],
    params: z.object({ pox: PoxParam, pool_principal: PoolParam }),
    query: z.object({
      ...paging(100, 200),
      after_block: z.int().min(1).optional().describe('Only delegations in blocks above this height'),
      height: z.int().min(1).optional().describe('Block height to read the pool at (default: the chain tip)'),
      unanchored: Unanchored,
    }),
    response: PoolDelegationList,
    responseDescription: 'A page of pool members',
    errors: [400, 404, 503],
    handler: async ({ params, query }, { sql }) => {
      const height = query.height ?? ((await chainTip(sql))?.block_height ?? 0) + (query.unanchored ? 1 : 0);
      const burnHeight = await pox.canonicalBlockBurnHeight(sql, height);
      if (burnHeight === undefined) notFound(`no block at height: ${height}`);
      const rows = await pox.poolDelegationEvents(sql, params.pox, params.pool_principal, height, query.after_block ?? 0);
      const members = poolDelegations(rows, params.pool_principal, burnHeight);
      const results = members.slice(query.offset, query.offset + query.limit);
      // the reference's total is a window count over the page's rows: 0 for a page past the end
      return { limit: query.limit, offset: query.offset, total: results.length ? members.length : 0, results };
    },
  }),
  ...legacyEndpoints,
];
