/** POST /rosetta/v1/mempool and /rosetta/v1/mempool/transaction. */
import { RosettaErrorResponse } from '../../schemas/rosetta.js';
import { endpoint } from '../../endpoint.js';
import * as store from '../../../store/rosetta.js';
import { MempoolRequest, MempoolTransactionRequest, MempoolResponse, MempoolTransactionResponse } from '../../schemas/rosetta.js';
import { RosettaErrors, checkNetwork, fail, hashParam, isHex, rosettaGuard, rosettaInvalid } from '../../rosetta.js';
import { rosettaTransaction } from '../../../chain/rosetta-ops.js';
import { opsTx } from './shared.js';

const TAGS = ['Rosetta'];

export const rosettaMempoolEndpoints = [
  endpoint({
    method: 'POST',
    path: '/rosetta/v1/mempool',
    operationId: 'rosetta_mempool',
    summary: 'Pending transaction ids',
    tags: TAGS,
    body: MempoolRequest,
    response: MempoolResponse,
    errors: [400],
    errorResponse: RosettaErrorResponse,
    invalid: rosettaInvalid('network_identifier'),
    handler: ({ body }, ctx) =>
      rosettaGuard(async () => {
        await checkNetwork(ctx, body.network_identifier);
        const ids = await store.rosettaMempoolIds(ctx.sql);
        return { transaction_identifiers: ids.map((hash) => ({ hash })) };
      }),
  }),
  endpoint({
    method: 'POST',
    path: '/rosetta/v1/mempool/transaction',
    operationId: 'rosetta_mempool_transaction',
    summary: 'A pending transaction as operations',
    description: 'Operation statuses are empty (not executed yet). Unknown → 400 with code 607.',
    tags: TAGS,
    body: MempoolTransactionRequest,
    response: MempoolTransactionResponse,
    errors: [400],
    errorResponse: RosettaErrorResponse,
    invalid: rosettaInvalid('network_identifier'),
    handler: ({ body }, ctx) =>
      rosettaGuard(async () => {
        const network = await checkNetwork(ctx, body.network_identifier);
        const txId = hashParam(body.transaction_identifier.hash, RosettaErrors.invalidTransactionHash);
        if (!isHex(txId)) fail(400, RosettaErrors.invalidTransactionHash);
        const row = await store.rosettaMempoolTx(ctx.sql, txId);
        if (!row) fail(400, RosettaErrors.transactionNotFound);
        return { transaction: rosettaTransaction(opsTx({ api: row!.api, abi: row!.abi }), { network }) };
      }),
  }),
];
