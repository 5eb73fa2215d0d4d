/** What the account answers are made of, before they are printed (src/answers reads them, src/views/v3.ts prints them). */
import type { StxLockState } from '../store/stx-lock.js';

/** What an STX balance answer is made of: the totals, the lock state and (when asked) the pending mempool flows. */
export interface StxBalanceParts {
  received: bigint;
  sent: bigint;
  fees: bigint;
  rewards: bigint;
  /** received - sent - fees + rewards */
  balance: bigint;
  lock: StxLockState;
  pending?: { inbound: bigint; outbound: bigint };
}

/** A principal's nonces now (v1 /address/{p}/nonces without a block, v3 /principals/{p}/nonces). */
export interface CurrentNonces {
  last_mempool_tx_nonce: number | null;
  last_executed_tx_nonce: number | null;
  possible_next_nonce: number;
  detected_missing_nonces: number[];
  detected_mempool_nonces: number[];
}
