/** POST /rosetta/v1/mempool and /rosetta/v1/mempool/transaction. */
import * as store from '../../../store/rosetta.js';
import { MempoolRequest, MempoolTransactionRequest, MempoolResponse, MempoolTransactionResponse } from '../../schemas/rosetta.js';
import { RosettaErrors, checkNetwork, fail, hashParam, isHex, rosettaGuard, rosettaEndpoint } from '../../rosetta.js';
import { rosettaTransaction } from '../../../chain/rosetta-ops.js';
import { opsTx } from './shared.js';


export const rosettaMempoolEndpoints = [
  rosettaEndpoint({
    path: '/rosetta/v1/mempool',
    operationId: 'rosetta_mempool',
    summary: 'Pending transaction ids',
    body: MempoolRequest,
    response: MempoolResponse,
    errors: [400],
    handler: ({ body }, ctx) =>
      rosettaGuard(async () => {
        await checkNetwork(ctx, body.network_identifier);
        const ids = await store.rosettaMempoolIds(ctx.sql);
        return { transaction_identifiers: ids.map((hash) => ({ hash })) };
      }),
  }),
  rosettaEndpoint({
    path: '/rosetta/v1/mempool/transaction',
    operationId: 'rosetta_mempool_transaction',
    summary: 'A pending transaction as operations',
    description: 'Operation statuses are empty (not executed yet). Unknown → 400 with code 607.',
    body: MempoolTransactionRequest,
    response: MempoolTransactionResponse,
    errors: [400],
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
