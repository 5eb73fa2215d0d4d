/**
 * The STX lock state of an address, as the reference computes it for /extended/v1/address/{p}/stx
 * (pg-store internalGetStxBalanceAtBlock):
 *   1. stx_lock events (pox-1 era) — the newest lock at stacks height <= H whose unlock height >= B;
 *   2. then pox-2, pox-3 and pox-4 synthetic events (sql/0008_pox.sql), each overriding what came before when it has a
 *      match: the newest event for the stacker at height <= H that is either not `handle-unlock` and still locked at B
 *      (burnchain_unlock_height >= B), or a `handle-unlock` that already happened (burnchain_unlock_height < B) — the
 *      latter resets the state to "not locked".
 * Sources 1, 2 and 3 stop counting once B is past the node's pox_v1/v2/v3_unlock_height (chain_state).
 * B is the burn height of the canonical block at min(H, tip); burnchain_lock_height is the burn height of the
 * canonical block at the lock's stacks height.
 */
import type { Sql } from './sql.js';
import { burnHeightAt } from './addresses.js';

export interface StxLockState {
  lock_tx_id: string;
  locked: string;
  lock_height: number;
  burnchain_lock_height: number;
  burnchain_unlock_height: number;
  /** the PoX version whose lock this is: 1 (stx_lock events), 2, 3 or 4; 0 when not locked */
  pox_version: number;
}

const UNLOCKED: StxLockState = {
  lock_tx_id: '',
  locked: '0',
  lock_height: 0,
  burnchain_lock_height: 0,
  burnchain_unlock_height: 0,
  pox_version: 0,
};

interface LockRow {
  tx_id: string;
  locked: string;
  block_height: number;
  unlock_height: number;
  burn_block_height: number | null;
}

/** The state a lock row gives (burnchain_lock_height: the burn height of the canonical block at the lock's height). */
function fromRow(r: LockRow, pox_version: number): StxLockState {
  return {
    lock_tx_id: r.tx_id,
    locked: r.locked,
    lock_height: Number(r.block_height),
    burnchain_lock_height: r.burn_block_height === null ? 0 : Number(r.burn_block_height),
    burnchain_unlock_height: Number(r.unlock_height),
    pox_version,
  };
}

type PoxLockRow = LockRow & { contract: string; name: string };

/**
 * Per PoX contract (pox-2, pox-3, pox-4): the stacker's newest synthetic event at height <= H that is either a lock
 * still in force at B or a `handle-unlock` that already happened.
 */
function poxLockRows(sql: Sql, principal: string, height: number, burnHeight: number) {
  return sql<PoxLockRow[]>`
      SELECT DISTINCT ON (split_part(e.contract_id, '.', 2))
        split_part(e.contract_id, '.', 2) AS contract, p.name, e.tx_id, p.locked::text AS locked, e.block_height,
        p.burnchain_unlock_height AS unlock_height,
        (SELECT b.burn_block_height FROM blocks b WHERE b.canonical AND b.block_height = e.block_height LIMIT 1) AS burn_block_height
      FROM pox_events p
      JOIN events e ON md5(e.value_hex) = p.value_md5
        AND e.event_type = 'smart_contract_log' AND e.topic = 'print' AND e.contract_id IN (
          'SP000000000000000000002Q6VF78.pox-2', 'ST000000000000000000002AMW42H.pox-2',
          'SP000000000000000000002Q6VF78.pox-3', 'ST000000000000000000002AMW42H.pox-3',
          'SP000000000000000000002Q6VF78.pox-4', 'ST000000000000000000002AMW42H.pox-4')
      JOIN txs t ON t.tx_id = e.tx_id AND t.index_block_hash = e.index_block_hash AND t.microblock_hash = e.microblock_hash
      WHERE p.stacker = ${principal} AND e.canonical AND e.microblock_canonical AND e.block_height <= ${height}
        AND ((p.name <> 'handle-unlock' AND p.burnchain_unlock_height >= ${burnHeight})
          OR (p.name = 'handle-unlock' AND p.burnchain_unlock_height < ${burnHeight}))
      ORDER BY split_part(e.contract_id, '.', 2), e.block_height DESC, t.microblock_sequence DESC, e.tx_index DESC,
        e.event_index DESC`;
}

export async function stxLockState(sql: Sql, principal: string, height: number, burnHeight: number): Promise<StxLockState> {
  const [state, stxLock, pox] = await Promise.all([
    sql<{ pox_v1_unlock_height: number | null; pox_v2_unlock_height: number | null; pox_v3_unlock_height: number | null }[]>`
      SELECT pox_v1_unlock_height, pox_v2_unlock_height, pox_v3_unlock_height FROM chain_state WHERE id = 1`,
    sql<LockRow[]>`
      SELECT e.tx_id, e.amount::text AS locked, e.block_height, e.unlock_height,
        (SELECT b.burn_block_height FROM blocks b WHERE b.canonical AND b.block_height = e.block_height LIMIT 1) AS burn_block_height
      FROM events e
      JOIN txs t ON t.tx_id = e.tx_id AND t.index_block_hash = e.index_block_hash AND t.microblock_hash = e.microblock_hash
      WHERE e.event_type = 'stx_lock' AND e.locked_address = ${principal} AND e.canonical AND e.microblock_canonical
        AND e.block_height <= ${height} AND e.unlock_height >= ${burnHeight}
      ORDER BY e.block_height DESC, t.microblock_sequence DESC, e.tx_index DESC, e.event_index DESC
      LIMIT 1`,
    poxLockRows(sql, principal, height, burnHeight),
  ]);
  const s = state[0];
  const past = (h: number | null | undefined) => h !== null && h !== undefined && burnHeight > Number(h);

  let out = UNLOCKED;
  if (!past(s?.pox_v1_unlock_height) && stxLock[0]) out = fromRow(stxLock[0], 1);
  const included: Record<string, boolean> = {
    'pox-2': !past(s?.pox_v2_unlock_height),
    'pox-3': !past(s?.pox_v3_unlock_height),
    'pox-4': true,
  };
  for (const contract of ['pox-2', 'pox-3', 'pox-4']) {
    const r = pox.find((p) => p.contract === contract);
    if (!r || !included[contract]) continue;
    out = r.name === 'handle-unlock' ? UNLOCKED : fromRow(r, Number(contract.slice(4)));
  }
  return { ...out };
}

/**
 * The lock state as the reference's /extended/v2/addresses/{p}/balances/stx computes it (pg-store-v2
 * getStxPoxLockedAtBlock), which differs from the v1 rule above: only pox-4 events count (a pox-1 `stx_lock` event or
 * a pox-2/3 lock shows as not locked), and `burnchain_lock_height` is the burn height of the canonical block at H (the
 * chain tip there), not of the block that locked.
 */
export async function stxLockStateV2(sql: Sql, principal: string, height: number, burnHeight: number): Promise<StxLockState> {
  const r = (await poxLockRows(sql, principal, height, burnHeight)).find((p) => p.contract === 'pox-4');
  if (!r || r.name === 'handle-unlock') return { ...UNLOCKED };
  return { ...fromRow(r, 4), burnchain_lock_height: (await burnHeightAt(sql, height)) ?? 0 };
}
