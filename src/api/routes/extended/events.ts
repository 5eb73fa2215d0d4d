/**
 * Event lists and contract info:
 *   GET /extended/v1/tx/events                       (by tx_id xor address, optional type filter)
 *   GET /extended/v1/contract/:contract_id/events    (smart_contract_log events of one contract)
 *   GET /extended/v1/contract/:contract_id           (deploy tx, source, ABI as a jsonb-ordered string)
 */
import { z } from 'zod';
import { endpoint, notFound, badRequest } from '../../endpoint.js';
import { List, PrincipalParam, TxId, Unanchored, paging } from '../../schemas/params.js';
import { ContractEventListResponse, ContractResponse, TxEventListResponse } from '../../schemas/txs.js';
import * as events from '../../../store/events.js';
import { contractDeployment } from '../../../store/contracts.js';

export const EVENT_TYPES = [
  'smart_contract_log',
  'stx_lock',
  'stx_asset',
  'fungible_token_asset',
  'non_fungible_token_asset',
] as const;

/**
 * JSON text of a value with object keys in PostgreSQL jsonb order (shorter key first, equal lengths bytewise),
 * at every depth, without whitespace — what the reference prints for a contract ABI.
 */
export function jsonbText(value: unknown): string {
  return JSON.stringify(jsonbOrder(value));
}

function jsonbOrder(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(jsonbOrder);
  if (v && typeof v === 'object') {
    const keys = Object.keys(v).sort((a, b) => {
      const ab = Buffer.from(a, 'utf8');
      const bb = Buffer.from(b, 'utf8');
      return ab.length - bb.length || Buffer.compare(ab, bb);
    });
    const out: Record<string, unknown> = {};
    for (const k of keys) out[k] = jsonbOrder((v as Record<string, unknown>)[k]);
    return out;
  }
  return v;
}

// any string: an unknown or malformed id has no events / is not found (the reference's answers)
const contractIdParams = z.object({ contract_id: z.string().describe('Contract identifier `<address>.<contract-name>`') });

export const eventEndpoints = [
  endpoint({
    method: 'GET',
    path: '/extended/v1/tx/events',
    operationId: 'get_filtered_events',
    summary: 'Events of a transaction or of a principal',
    tags: ['Events'],
    query: z.object({
      tx_id: TxId.optional().describe('Events of this transaction (exactly one of tx_id or address)'),
      address: PrincipalParam.optional().describe('Events involving this principal (exactly one of tx_id or address)'),
      type: List(z.enum(EVENT_TYPES)).optional().describe('Event types to keep, repeated or comma-separated'),
      ...paging(20, 100),
    }),
    response: TxEventListResponse,
    responseDescription: 'A page of events, newest first',
    errors: [400, 503],
    handler: async ({ query: q }, { sql }) => {
      if (q.tx_id === undefined && q.address === undefined) badRequest(`can not find 'address' or 'tx_id' in the request`);
      if (q.tx_id !== undefined && q.address !== undefined) badRequest(`can't handle both 'address' and 'tx_id' in the same request`);
      const who = q.tx_id !== undefined ? { txId: q.tx_id } : { address: q.address! };
      const results = await events.eventsPage(sql, who, { types: q.type, limit: q.limit, offset: q.offset });
      return { limit: q.limit, offset: q.offset, results };
    },
  }),
  endpoint({
    method: 'GET',
    path: '/extended/v1/contract/:contract_id/events',
    operationId: 'get_contract_events_by_id',
    summary: 'Events of a contract',
    description: '`smart_contract_log` events of the contract, newest first.',
    tags: ['Smart Contracts'],
    params: contractIdParams,
    // SPEC: unanchored=true includes events of unconfirmed microblocks; otherwise only anchored ones (height <= tip).
    query: z.object({ ...paging(20, 50), unanchored: Unanchored }),
    response: ContractEventListResponse,
    responseDescription: 'A page of events',
    errors: [400, 503],
    handler: async ({ params, query: q }, { sql }) => ({
      limit: q.limit,
      offset: q.offset,
      results: await events.contractLogEvents(sql, params.contract_id, q),
    }),
  }),
  endpoint({
    method: 'GET',
    path: '/extended/v1/contract/:contract_id',
    operationId: 'get_contract_by_id',
    summary: 'Contract by identifier',
    tags: ['Smart Contracts'],
    params: contractIdParams,
    response: ContractResponse,
    responseDescription: 'The contract',
    errors: [404, 503],
    handler: async ({ params }, { sql }) => {
      const row = await contractDeployment(sql, params.contract_id);
      if (!row) notFound('cannot find contract by ID');
      const sc = row.api.smart_contract ?? {};
      const abi = row.contract_abi === null || row.contract_abi === undefined ? null : jsonbText(row.contract_abi);
      return {
        tx_id: row.tx_id,
        canonical: row.canonical,
        contract_id: params.contract_id,
        block_height: row.block_height,
        clarity_version: sc.clarity_version ?? null,
        source_code: sc.source_code ?? '',
        abi,
      };
    },
  }),
];
