/**
 * GET /extended/v1/search/:id — a block hash, tx id (mined or pending), contract id or address. A 32-byte hash is
 * looked up as a mined tx, then a mempool tx, then a block (microblock hashes are not searched, as in the reference);
 * anything else must be a principal.
 */
import { z } from 'zod';
import { endpoint, notFound } from '../../endpoint.js';
import { Bool } from '../../schemas/params.js';
import { isContractId, isPrincipal } from '../../../chain/principal.js';
import { SearchResponse } from '../../schemas/explorer.js';
import { mempoolTxJson, txJson } from '../../../views/txs.js';
import type { TxDbRow } from '../../../store/txs.js';
import * as search from '../../../store/search.js';
import * as blocks from '../../../store/blocks.js';
import { burnHeightAt } from '../../../store/addresses.js';
import { chainTip } from '../../../store/chain-tip.js';
import { stxBalance, v1SingleBlockJson } from '../../../answers/index.js';

const HASH_TERM = /^(0x)?[0-9a-fA-F]{64}$/;

const minedTxData = (r: TxDbRow) => ({
  canonical: r.canonical,
  block_hash: r.block_hash || '0x',
  burn_block_time: Number(r.burn_block_time),
  block_height: Number(r.block_height),
  tx_type: r.api.tx_type,
});

export const searchEndpoints = [
  endpoint({
    method: 'GET',
    path: '/extended/v1/search/:id',
    operationId: 'search_by_id',
    summary: 'Search by hash or principal',
    description:
      'A block hash, transaction id (mined, else pending), contract id or address (surrounding blanks ignored). ' +
      '`include_metadata` adds the full object (tx, legacy block, contract deploy tx, STX balance).',
    tags: ['Search'],
    params: z.object({ id: z.string().describe('A block hash or tx id (64 hex digits, `0x` optional), a contract id or an address') }),
    query: z.object({ include_metadata: Bool().describe('Include the full object found') }),
    response: SearchResponse,
    responseDescription: 'What the term names',
    errors: [400, 404, 503],
    handler: async ({ params, query: q }, { sql }) => {
      const term = params.id.trim();
      const meta = q.include_metadata;
      if (HASH_TERM.test(term)) {
        const hash = (term.startsWith('0x') ? term : '0x' + term).toLowerCase();
        const mined = await search.anyPlacedTx(sql, hash, meta);
        if (mined) {
          return { found: true, result: { entity_id: hash, entity_type: 'tx_id', tx_data: minedTxData(mined), ...(meta ? { metadata: txJson(mined) } : {}) } };
        }
        const pending = await search.searchMempoolTx(sql, hash, meta);
        if (pending) {
          return {
            found: true,
            result: {
              entity_id: hash,
              entity_type: 'mempool_tx_id',
              tx_data: { tx_type: pending.api.tx_type },
              ...(meta ? { metadata: mempoolTxJson(pending) } : {}),
            },
          };
        }
        const b = await blocks.blockByHash(sql, hash);
        if (b) {
          return {
            found: true,
            result: {
              entity_id: b.block_hash,
              entity_type: 'block_hash',
              block_data: {
                canonical: b.canonical,
                hash: b.block_hash,
                parent_block_hash: b.parent_block_hash,
                burn_block_time: Number(b.burn_block_time),
                height: Number(b.block_height),
              },
              ...(meta ? { metadata: await v1SingleBlockJson(sql, b) } : {}),
            },
          };
        }
        notFound(`No block or transaction found with hash "${hash}"`);
      }
      if (!isPrincipal(term)) {
        notFound(`The term "${term}" is not a valid block hash, transaction ID, contract principal, or account address principal`);
      }
      if (isContractId(term)) {
        const { mempool, mined } = await search.contractDeploy(sql, term);
        if (mined) {
          return {
            found: true,
            result: {
              entity_id: term,
              entity_type: 'contract_address',
              tx_data: { ...minedTxData(mined), tx_id: mined.tx_id },
              ...(meta ? { metadata: txJson(mined) } : {}),
            },
          };
        }
        if (mempool) {
          return {
            found: true,
            result: {
              entity_id: term,
              entity_type: 'contract_address',
              tx_data: { tx_type: mempool.api.tx_type, tx_id: mempool.tx_id },
              ...(meta ? { metadata: mempoolTxJson(mempool) } : {}),
            },
          };
        }
        notFound(`No principal found with address "${term}"`);
      }
      if (!(await search.addressSeen(sql, term))) notFound(`No principal found with address "${term}"`);
      if (!meta) return { found: true, result: { entity_id: term, entity_type: 'standard_address' } };
      // the balance as of the unconfirmed microblock stream, locks reckoned at the tip's burn height
      const tip = await chainTip(sql);
      if (!tip) notFound('No current block');
      const burnHeight = (await burnHeightAt(sql, tip.block_height)) ?? tip.burn_block_height;
      const metadata = await stxBalance(sql, term, tip.block_height + 1, burnHeight, false);
      return { found: true, result: { entity_id: term, entity_type: 'standard_address', metadata } };
    },
  }),
];
