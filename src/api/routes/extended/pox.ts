/**
 * PoX: GET /extended/v1/{pox2,pox3,pox4}/events, /tx/{tx_id}, /stacker/{principal}, /{pool_principal}/delegations;
 * the legacy /extended/v1/pox<N>_events/… redirects; /extended/v2/pox/cycles….
 */
import { z } from 'zod';
import { LABEL, badRequest, endpoint, networkChecked, notFound, raw } from '../../endpoint.js';
import { httpError, redirect } from '../../../http/response.js';
import type { HttpRequest } from '../../../http/router.js';
import { LoosePrincipalParam, Unanchored, paging, principalSchema } from '../../schemas/params.js';
import {
  PoolDelegationList,
  PoxCycle,
  PoxCycleList,
  PoxEventList,
  PoxEventResults,
  PoxSigner,
  PoxSignerList,
  PoxStackerList,
} from '../../schemas/pox.js';
import {
  cycleStackers,
  poolDelegations,
  poxCycleJson,
  poxEventsJson,
  poxSignerJson,
  signerStackersJson,
} from '../../../views/pox.js';
import type { ApiContext } from '../../context.js';
import { codec } from '../../../chain/native.js';
import { chainTip } from '../../../store/chain-tip.js';
import { recordedNetwork } from '../../../store/network.js';
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

const StackerParam = LoosePrincipalParam(`${LABEL} is not a valid STX address`);

const PoolParam = networkChecked(principalSchema().describe('Principal of the stacking pool (the delegate)'));

/** A tx id as the reference's hex check accepts it: `0x` and whole bytes of hex. */
const PoxTxId = z
  .string()
  .regex(/^0x([0-9a-fA-F]{2})*$/, { message: `${LABEL} must be a 0x-prefixed hex string` })
  .transform((s) => s.toLowerCase())
  .describe('Transaction id (0x-prefixed hex)');

const LEGACY_NOTE = 'Legacy prefix: sub-paths of `/extended/v1/pox4_events/` redirect to `/extended/v1/pox4/`.';

/**
 * `/extended/v1/pox<N>_events/<rest>` as the reference answers it: `pox4_events/` becomes `pox4/` (query kept) and
 * redirects; other versions redirect to themselves; the bare prefix is a route-not-found 404.
 */
function legacyRedirect(req: HttpRequest, rest: string) {
  if (!rest) return raw(httpError(404, `Route ${req.method}:${req.path}${req.rawQuery ? '?' + req.rawQuery : ''} not found`));
  const url = req.path + (req.rawQuery ? '?' + req.rawQuery : '');
  // the location echoes the request: past 8 KiB it would not fit the header limits of common clients
  if (url.length > 8192) return raw(httpError(400, 'the url path is too long to redirect'));
  return raw(redirect(302, url.replace(/\/(pox4)_events(\/|$)/, (_m, p1: string, p2: string) => (p2 === '/' ? `/${p1}/` : `/${p1}/events`))));
}

/** Any `/extended/v1/pox<N>_events/…` (undocumented). */
const legacyWildcards = Array.from({ length: 10 }, (_, n) =>
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
    handler: ({ req }) => legacyRedirect(req, req.params['*'] ?? ''),
  }),
);

/** The documented legacy forms of the pox4 routes. */
const legacyPox4 = (
  [
    ['events', 'events', undefined],
    ['stacker/:principal', 'stacker', 'principal'],
    ['tx/:tx_id', 'tx', 'tx_id'],
    [':pool_principal/delegations', 'delegations', 'pool_principal'],
  ] as const
).map(([sub, name, param]) =>
  endpoint({
    method: 'GET',
    path: `/extended/v1/pox4_events/${sub}`,
    operationId: `redirect_pox4_events_${name}`,
    summary: `Legacy form of /extended/v1/pox4/${sub.replace(/:(\w+)/, '{$1}')}`,
    description: LEGACY_NOTE,
    tags: ['Stacking'],
    params: param ? z.object({ [param]: z.string() }) : undefined,
    redirect: { status: 302, description: `Moved to /extended/v1/pox4/${sub.replace(/:(\w+)/, '{$1}')}` },
    errors: [400],
    cache: 'none',
    handler: ({ req }) => legacyRedirect(req, sub),
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
  ...legacyPox4,
  ...legacyWildcards,
];

// ---- /extended/v2/pox/cycles… -----------------------------------------------------------------------------------------

const CycleNumber = z.int().describe('PoX reward cycle number');

const HEX_BYTES = /^0x([0-9a-fA-F]{2})*$/;

/**
 * A signer key as written: `key` is the 0x-prefixed lower-case form (the reference adds a missing `0x` when it reads
 * one signer), `strict` the same only when it was written with `0x` (its stackers route does not add it); null when it
 * is not hex bytes (the reference fails with a 500 on those: a 400 here, after the cycle check it makes first).
 */
const SignerKey = z
  .string()
  .transform((raw) => {
    const prefixed = raw.startsWith('0x') ? raw : '0x' + raw;
    const key = HEX_BYTES.test(prefixed) ? prefixed.toLowerCase() : null;
    return { raw, key, strict: raw.startsWith('0x') ? key : null };
  })
  .describe('Signer public key (hex, `0x` optional)');

/** The chain's network: the settled chain id, else the one the database adopted since start-up (sql/0016_chain_network). */
const isMainnet = async (ctx: ApiContext) => (ctx.chainId ?? (await recordedNetwork(ctx.sql))) === 1;

export const poxCycleEndpoints = [
  endpoint({
    method: 'GET',
    path: '/extended/v2/pox/cycles',
    operationId: 'get_pox_cycles',
    summary: 'PoX cycles',
    description: 'Reward cycles with a signer set, newest first (limit 0 gives an empty page, as the reference).',
    tags: ['Stacking'],
    query: z.object({
      limit: z.int().min(0).max(60).default(20).describe('Page size (absent: 20; more than 60: 400)'),
      offset: z.int().min(0).default(0).describe('Index of the first item'),
    }),
    response: PoxCycleList,
    responseDescription: 'A page of cycles',
    errors: [400, 503],
    handler: async ({ query }, { sql }) => {
      const { rows, total } = await pox.poxCycles(sql, query);
      return { limit: query.limit, offset: query.offset, total, results: rows.map(poxCycleJson) };
    },
  }),
  endpoint({
    method: 'GET',
    path: '/extended/v2/pox/cycles/:cycle_number',
    operationId: 'get_pox_cycle',
    summary: 'PoX cycle',
    tags: ['Stacking'],
    params: z.object({ cycle_number: CycleNumber }),
    response: PoxCycle,
    responseDescription: 'The cycle',
    errors: [400, 404, 503],
    handler: async ({ params }, { sql }) => {
      const row = await pox.poxCycle(sql, params.cycle_number);
      return row ? poxCycleJson(row) : notFound('Not found');
    },
  }),
  endpoint({
    method: 'GET',
    path: '/extended/v2/pox/cycles/:cycle_number/signers',
    operationId: 'get_pox_cycle_signers',
    summary: 'Signers of a PoX cycle',
    description: 'By weight, then stacked amount; with the number of solo and pooled stackers behind each signer.',
    tags: ['Stacking'],
    params: z.object({ cycle_number: CycleNumber }),
    query: z.object(paging(100, 250)),
    response: PoxSignerList,
    responseDescription: 'A page of signers',
    errors: [400, 404, 503],
    handler: async ({ params, query }, ctx) => {
      if (!(await pox.poxCycleKnown(ctx.sql, params.cycle_number))) notFound('PoX cycle not found');
      const { rows, total } = await pox.poxSigners(ctx.sql, params.cycle_number, query);
      const stackers = rows.length ? cycleStackers(await pox.poxSignerEvents(ctx.sql, params.cycle_number), params.cycle_number) : [];
      const mainnet = await isMainnet(ctx);
      return {
        limit: query.limit,
        offset: query.offset,
        total,
        results: rows.map((r) => poxSignerJson(r, stackers, mainnet)),
      };
    },
  }),
  endpoint({
    method: 'GET',
    path: '/extended/v2/pox/cycles/:cycle_number/signers/:signer_key',
    operationId: 'get_pox_cycle_signer',
    summary: 'A signer of a PoX cycle',
    tags: ['Stacking'],
    params: z.object({ cycle_number: CycleNumber, signer_key: SignerKey }),
    response: PoxSigner,
    responseDescription: 'The signer',
    errors: [400, 404, 503],
    handler: async ({ params }, ctx) => {
      if (!(await pox.poxCycleKnown(ctx.sql, params.cycle_number))) notFound('PoX cycle not found');
      const key = params.signer_key.key ?? badRequest(`params/signer_key must be a hex string`);
      const { rows } = await pox.poxSigners(ctx.sql, params.cycle_number, { signingKey: key, limit: 1, offset: 0 });
      if (!rows[0]) notFound('Not found');
      return poxSignerJson(rows[0], cycleStackers(await pox.poxSignerEvents(ctx.sql, params.cycle_number), params.cycle_number), await isMainnet(ctx));
    },
  }),
  endpoint({
    method: 'GET',
    path: '/extended/v2/pox/cycles/:cycle_number/signers/:signer_key/stackers',
    operationId: 'get_pox_cycle_signer_stackers',
    summary: 'Stackers behind a signer in a PoX cycle',
    description: 'Solo and pooled stackers whose STX back the signer, by locked amount.',
    tags: ['Stacking'],
    params: z.object({ cycle_number: CycleNumber, signer_key: SignerKey }),
    query: z.object(paging(100, 200)),
    response: PoxStackerList,
    responseDescription: 'A page of stackers',
    errors: [400, 404, 503],
    handler: async ({ params, query }, ctx) => {
      if (!(await pox.poxCycleKnown(ctx.sql, params.cycle_number))) notFound('PoX cycle not found');
      const key = params.signer_key.strict ?? badRequest(`params/signer_key must be a 0x-prefixed hex string`);
      if (!(await pox.poxSignerKnown(ctx.sql, params.cycle_number, key))) notFound('PoX cycle signer not found');
      const { rows } = await pox.poxSigners(ctx.sql, params.cycle_number, { signingKey: key, limit: 1, offset: 0 });
      const all = rows.length ? signerStackersJson(cycleStackers(await pox.poxSignerEvents(ctx.sql, params.cycle_number), params.cycle_number), key) : [];
      const results = all.slice(query.offset, query.offset + query.limit);
      // the reference's total is a window count over the page's rows: 0 for a page past the end
      return { limit: query.limit, offset: query.offset, total: results.length ? all.length : 0, results };
    },
  }),
];
