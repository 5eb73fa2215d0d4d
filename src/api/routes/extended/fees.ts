/**
 * Fee routes:
 *   POST /extended/v1/fee_rate        the reference's constant fee rate estimate
 *   GET  /extended/v2/mempool/fees    p25/p50/p75/p95 of pending fee rates, over all and per tx type
 */
import { z } from 'zod';
import { endpoint } from '../../endpoint.js';
import { FeeRateResponse, MempoolFeePrioritiesResponse } from '../../schemas/accounts.js';
import * as nonces from '../../../store/nonces.js';

/** The reference answers this constant whatever the transaction (it never decodes it). */
const FEE_RATE = 400;

const GROUPS: Record<string, 'token_transfer' | 'contract_call' | 'smart_contract'> = {
  token_transfer: 'token_transfer',
  contract_call: 'contract_call',
  smart_contract: 'smart_contract',
};

export const feeEndpoints = [
  endpoint({
    method: 'POST',
    path: '/extended/v1/fee_rate',
    operationId: 'fetch_fee_rate',
    summary: 'Fee rate estimate',
    description: 'A constant estimate (400 micro-STX per byte), as the reference answers; use `POST /v2/fees/transaction` for the node\'s.',
    tags: ['Fees'],
    body: z.object({ transaction: z.string().describe('A serialized transaction (hex); not decoded') }),
    response: FeeRateResponse,
    responseDescription: 'The fee rate',
    errors: [400],
    handler: () => ({ fee_rate: FEE_RATE }),
  }),
  endpoint({
    method: 'GET',
    path: '/extended/v2/mempool/fees',
    operationId: 'get_mempool_fee_priorities',
    summary: 'Mempool fee priorities',
    description: 'Fee rates (micro-STX) at the 25th/50th/75th/95th percentile of pending transactions, over all and per type.',
    tags: ['Mempool'],
    response: MempoolFeePrioritiesResponse,
    responseDescription: 'Fee priorities',
    errors: [503],
    handler: async (_input, { sql }) => {
      const rows = await nonces.mempoolFeePriorities(sql);
      const v = (r: nonces.FeePriorityRow) => ({
        no_priority: r.no_priority ?? 0,
        low_priority: r.low_priority ?? 0,
        medium_priority: r.medium_priority ?? 0,
        high_priority: r.high_priority ?? 0,
      });
      const out: Record<string, ReturnType<typeof v>> = { all: { no_priority: 0, low_priority: 0, medium_priority: 0, high_priority: 0 } };
      for (const r of rows) {
        if (r.type === null) out.all = v(r);
        else if (GROUPS[r.type]) out[GROUPS[r.type]] = v(r);
      }
      return out;
    },
  }),
];
