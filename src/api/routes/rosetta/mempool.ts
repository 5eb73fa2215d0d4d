/** POST /rosetta/v1/mempool and /rosetta/v1/mempool/transaction. */
import * as store from '../../../store/rosetta.js';
import { MempoolRequest, MempoolTransactionRequest, MempoolResponse, MempoolTransactionResponse } from '../../schemas/rosetta.js';
import { RosettaErrors, checkNetwork, fail, hashParam, isHex, rosettaGuard, rosettaEndpoint } from '../../rosetta.js';
import { pendingContractCall, rosettaTransaction } from '../../../chain/rosetta-ops.js';
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
    description:
      'Operation statuses are empty (not executed yet). Unknown → 400 with code 607. Txs mined only in the unconfirmed microblock stream ' +
      "are still pending here. A contract call's operation is read from the call as mined (status, stacking metadata), as the reference " +
      'does; a contract call that was never mined is a 400 (code 612; the reference fails there with an empty body).',
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
        const pending = opsTx({ api: row!.api, abi: row!.abi });
        if (pending.tx_type !== 'contract_call') return { transaction: rosettaTransaction(pending, { network }) };
        const stored = await store.rosettaStoredTx(ctx.sql, txId);
        const transaction = pendingContractCall(pending, stored && opsTx(stored), { network });
        if (!transaction) fail(400, RosettaErrors.unknownError, { message: 'a contract call is listed once mined: this one is not' });
        return { transaction };
      }),
  }),
];
