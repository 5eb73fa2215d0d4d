/**
 * Whether the database has seen a principal at all: a tx or a transfer event involving it, or a pending tx. A chain
 * may hold principals of the other network (Clarity does not forbid sending to them), so a principal of the other
 * network is refused by the API only when this says the database knows nothing of it.
 */
import type { Sql } from './sql.js';
import { addressSeen } from './search.js';

export async function principalKnown(sql: Sql, principal: string): Promise<boolean> {
  const [r] = await sql<{ known: boolean }[]>`
    SELECT EXISTS (SELECT 1 FROM principal_tx_counts WHERE principal = ${principal})
      OR EXISTS (SELECT 1 FROM mempool_txs WHERE sender_address = ${principal})
      OR EXISTS (SELECT 1 FROM mempool_txs WHERE token_transfer_recipient = ${principal}) AS known`;
  return r.known || (await addressSeen(sql, principal));
}
