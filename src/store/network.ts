/**
 * The network a database holds (STACKS_CHAIN_ID), recorded once in `chain_network`; what a network is and how a
 * transaction names it is pure logic in src/chain/network.ts.
 */
import type { Sql } from './sql.js';
import { StartupError } from '../startup-error.js';
import { describeId, hexChainId, networkName } from '../chain/network.js';

/** The network recorded in the database, if any. */
export async function recordedNetwork(sql: Sql): Promise<number | undefined> {
  const rows = await sql<{ chain_id: number }[]>`SELECT chain_id FROM chain_network`;
  return rows[0] === undefined ? undefined : Number(rows[0].chain_id);
}

/**
 * Records `chainId` unless another network is recorded already; returns the one recorded (the caller compares).
 */
export async function recordNetwork(sql: Sql, chainId: number, source: string): Promise<number> {
  await sql`INSERT INTO chain_network (chain_id, source) VALUES (${chainId}, ${source}) ON CONFLICT (singleton) DO NOTHING`;
  return (await recordedNetwork(sql))!;
}

/**
 * At start-up: with STACKS_CHAIN_ID set, a database recorded under the other network refuses to start, and a new
 * database records it; unset, the database's network (if recorded) is adopted. Returns the network in force (or
 * undefined: the first transaction stored decides).
 */
export async function settleNetwork(sql: Sql, configured: number | undefined): Promise<number | undefined> {
  const recorded = await recordedNetwork(sql);
  if (configured === undefined) return recorded;
  if (recorded !== undefined && recorded !== configured) {
    throw new StartupError(
      `STACKS_CHAIN_ID=${hexChainId(configured)} (${networkName(configured)}), but this database holds chain id ` +
        `${describeId(recorded)}: set STACKS_CHAIN_ID=${networkName(recorded)} (or leave it unset), or use another database`,
    );
  }
  if (recorded === undefined) {
    await recordNetwork(sql, configured, 'STACKS_CHAIN_ID');
    return settleNetwork(sql, configured); // another process may have recorded first
  }
  return recorded;
}
