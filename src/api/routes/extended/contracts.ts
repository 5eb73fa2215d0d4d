/**
 * Contract lists: GET /extended/v1/contract/by_trait, /extended/v2/smart-contracts/status.
 */
import { z } from 'zod';
import { badRequest, endpoint, notFound } from '../../endpoint.js';
import { List, REF_CONTRACT_PATTERN, paging } from '../../schemas/params.js';
import { ContractListResponse, ContractStatusResponse } from '../../schemas/explorer.js';
import { jsonbText } from './events.js';
import * as lists from '../../../store/contract-lists.js';

/** A trait ABI (JSON text) with a `functions` list; not JSON → 400 (the reference answers 500). */
const TraitAbi = z
  .string()
  .transform((s, ctx) => {
    try {
      return JSON.parse(s) as unknown;
    } catch {
      ctx.addIssue({ code: 'custom', message: '{label} must be a JSON Clarity ABI' });
      return z.NEVER;
    }
  })
  .pipe(
    z.looseObject(
      {
        functions: z.array(
          z.looseObject({
            name: z.string(),
            access: z.string(),
            args: z.array(z.looseObject({ type: z.unknown() })),
            outputs: z.unknown(),
          }),
        ),
      },
      { error: "Invalid 'trait_abi'" },
    ),
  )
  .describe('A trait\'s ABI as JSON: `{"functions": [{"name", "access", "args": [{"type"}], "outputs"}, …]}`');

export const contractListEndpoints = [
  endpoint({
    method: 'GET',
    path: '/extended/v1/contract/by_trait',
    operationId: 'get_contracts_by_trait',
    summary: 'Contracts implementing a trait',
    description: 'Canonical contracts whose ABI has every function of the trait (same name, access, argument types and outputs), newest first.',
    tags: ['Smart Contracts'],
    query: z.object({ trait_abi: TraitAbi, ...paging(20, 50) }),
    response: ContractListResponse,
    responseDescription: 'A page of contracts',
    errors: [400, 404, 503],
    handler: async ({ query: q }, { sql }) => {
      const fns = q.trait_abi.functions.map((f) => ({
        name: f.name,
        access: f.access,
        args: f.args.map((a) => ({ type: a.type })),
        outputs: f.outputs,
      }));
      const rows = await lists.contractsByTrait(sql, fns, q);
      if (!rows.length) notFound('cannot find contract for this trait');
      return {
        limit: q.limit,
        offset: q.offset,
        results: rows.map((r) => ({
          tx_id: r.tx_id,
          canonical: r.canonical,
          contract_id: r.contract_id,
          block_height: Number(r.block_height),
          clarity_version: r.api.smart_contract?.clarity_version ?? null,
          source_code: r.api.smart_contract?.source_code ?? '',
          abi: r.contract_abi === null || r.contract_abi === undefined ? null : jsonbText(r.contract_abi),
        })),
      };
    },
  }),
  endpoint({
    method: 'GET',
    path: '/extended/v2/smart-contracts/status',
    operationId: 'get_smart_contracts_status',
    summary: 'Deploy status of contracts',
    description: 'Per contract id: its canonical deploy tx (status, height), else its pending deploy, else `found: false`.',
    tags: ['Smart Contracts'],
    query: z.object({
      contract_id: List(z.string().regex(new RegExp(REF_CONTRACT_PATTERN)))
        .min(1)
        .describe('Contract ids, repeated (a comma is not a separator here: 400)'),
    }),
    response: ContractStatusResponse,
    responseDescription: 'Status per contract id',
    errors: [400, 503],
    handler: async ({ query: q, req }, { sql }) => {
      // The reference takes `contract_id` as repeated values only: a comma makes the value fail its contract-id
      // pattern (a 400), where the router would split it like other list parameters.
      if (new URLSearchParams(req.rawQuery ?? '').getAll('contract_id').some((v) => v.includes(','))) {
        badRequest(`querystring/contract_id must match pattern "${REF_CONTRACT_PATTERN}"`);
      }
      const ids = [...new Set(q.contract_id)];
      const rows = await lists.contractStatuses(sql, ids);
      const out: Record<string, unknown> = {};
      for (const r of rows) {
        out[r.contract_id] = {
          found: true,
          result: {
            contract_id: r.contract_id,
            tx_id: r.tx_id,
            status: r.status,
            ...(r.block_height === null ? {} : { block_height: r.block_height }),
          },
        };
      }
      for (const id of ids) if (!(id in out)) out[id] = { found: false };
      return out;
    },
  }),
];
