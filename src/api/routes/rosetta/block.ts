/** POST /rosetta/v1/block and /rosetta/v1/block/transaction. */
import * as store from '../../../store/rosetta.js';
import { BlockRequest, BlockTransactionRequest, BlockResponse, Transaction } from '../../schemas/rosetta.js';
import { RosettaErrors, checkNetwork, fail, hashParam, isHex, rosettaGuard, rosettaEndpoint } from '../../rosetta.js';
import type { Sql } from '../../../store/sql.js';
import { minedTransactionJson, rosettaBlockJson } from './shared.js';


/**
 * The block a partial identifier names: by `hash` (the block hash, not the index block hash; `0x` optional) when it
 * has one, else by `index` when it is above 0, else the chain tip (`{}`, `{"index": 0}`, `{"index": -1}`).
 */
export async function blockOf(sql: Sql, id: Record<string, unknown>): Promise<store.RosettaBlockRow | undefined> {
  const hash = typeof id.hash === 'string' && id.hash !== '' ? hashParam(id.hash, RosettaErrors.invalidBlockHash) : undefined;
  const index = typeof id.index === 'number' ? id.index : undefined;
  if (hash !== undefined) return store.rosettaBlockByHash(sql, hash);
  if (index !== undefined && index > 0) return store.rosettaBlockAtHeight(sql, index);
  return store.rosettaTip(sql);
}

export const rosettaBlockEndpoints = [
  rosettaEndpoint({
    path: '/rosetta/v1/block',
    operationId: 'rosetta_block',
    summary: 'A block and its transactions as operations',
    description:
      'By block hash (not the index block hash) or height; no identifier, or index 0 or below, is the chain tip. An unknown block is a 404 with code 605 (the reference answers 500).',
    body: BlockRequest,
    response: BlockResponse,
    errors: [400, 404],
    handler: ({ body }, ctx) =>
      rosettaGuard(async () => {
        const network = await checkNetwork(ctx, body.network_identifier);
        const b = await blockOf(ctx.sql, body.block_identifier);
        const block = b && (await rosettaBlockJson(ctx.sql, b, network, true, ctx.nodes?.()));
        if (!block) fail(404, RosettaErrors.blockNotFound);
        return { block };
      }),
  }),
  rosettaEndpoint({
    path: '/rosetta/v1/block/transaction',
    operationId: 'rosetta_block_transaction',
    summary: 'A mined transaction as operations',
    description: 'Found by its id (the block identifier is not consulted, as in the reference). Unknown → 404 with code 607.',
    body: BlockTransactionRequest,
    response: Transaction,
    errors: [400, 404],
    handler: ({ body }, ctx) =>
      rosettaGuard(async () => {
        const network = await checkNetwork(ctx, body.network_identifier);
        if (typeof body.block_identifier.hash === 'string' && body.block_identifier.hash !== '') hashParam(body.block_identifier.hash, RosettaErrors.invalidBlockHash);
        const txId = hashParam(body.transaction_identifier.hash, RosettaErrors.invalidTransactionHash);
        if (!isHex(txId)) fail(400, RosettaErrors.invalidTransactionHash);
        const row = await store.rosettaMinedTx(ctx.sql, txId);
        if (!row) fail(404, RosettaErrors.transactionNotFound);
        return minedTransactionJson(ctx.sql, row!, network, ctx.nodes?.());
      }),
  }),
];
