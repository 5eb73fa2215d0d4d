/** What several Rosetta routes share: a block or tx with its operations (store reads + src/chain/rosetta-ops.ts). */
import type { Sql } from '../../../store/sql.js';
import * as store from '../../../store/rosetta.js';
import { withContractAbi } from '../../../chain/contract-call.js';
import { rosettaTransaction, type OpsTx, type RosettaTransaction } from '../../../chain/rosetta-ops.js';
import type { TxStaticJson } from '../../../chain/tx.js';
import type { RosettaNetwork } from '../../rosetta.js';
import type { NodePool } from '../../../proxy/pool.js';
import { ftMetadata } from '../../rosetta-ft.js';
import type { OpsEvent } from '../../../chain/rosetta-ops.js';

/** A stored tx (its static JSON, the called contract's ABI, status and result) as the operations read it. */
export function opsTx(row: { api: TxStaticJson; abi: unknown; status?: string; raw_result?: string }): OpsTx {
  const api = row.api.contract_call ? withContractAbi(row.api, row.abi as never) : row.api;
  return {
    tx_id: api.tx_id,
    tx_type: api.tx_type,
    status: row.status ?? '',
    fee_rate: api.fee_rate,
    sender_address: api.sender_address,
    token_transfer: api.token_transfer,
    contract_call: api.contract_call,
    tenure_change_payload: api.tenure_change_payload as Record<string, unknown> | undefined,
    raw_result: row.raw_result ?? '',
  };
}

export interface RosettaBlockJson {
  block_identifier: { index: number; hash: string };
  parent_block_identifier: { index: number; hash: string };
  timestamp: number;
  transactions: RosettaTransaction[];
  metadata: { burn_block_height: number };
}

/** Rosetta's block (with or without its txs); undefined when its parent is not found either. */
export async function rosettaBlockJson(sql: Sql, b: store.RosettaBlockRow, network: RosettaNetwork, withTxs: boolean, pool?: NodePool): Promise<RosettaBlockJson | undefined> {
  let parent = { index: b.block_height, hash: b.block_hash };
  if (b.block_height > 1) {
    const p = await store.rosettaBlockByHash(sql, b.parent_block_hash);
    if (!p) return undefined;
    parent = { index: p.block_height, hash: p.block_hash };
  }
  const transactions = withTxs ? await blockTransactions(sql, b, network, pool) : [];
  return {
    block_identifier: { index: b.block_height, hash: b.block_hash },
    parent_block_identifier: parent,
    // epoch 2.x: the burn block time is the consensus time; Nakamoto blocks (signed) carry their own
    timestamp: (b.signer_bitvec ? b.block_time : b.burn_block_time) * 1000,
    transactions,
    metadata: { burn_block_height: b.burn_block_height },
  };
}

/** FT symbol/decimals (from the node, when there is one) of the tokens these events move. */
async function ftLookup(pool: NodePool | undefined, events: Iterable<OpsEvent[]>) {
  const assets: string[] = [];
  for (const list of events) for (const e of list) if (e.event_type === 'fungible_token_asset' && e.asset_identifier) assets.push(e.asset_identifier);
  const meta = assets.length ? await ftMetadata(pool, assets) : new Map();
  return (asset: string) => meta.get(asset);
}

async function blockTransactions(sql: Sql, b: store.RosettaBlockRow, network: RosettaNetwork, pool?: NodePool): Promise<RosettaTransaction[]> {
  const rows = await store.rosettaBlockTxs(sql, b.index_block_hash);
  if (!rows.length) return [];
  const [events, minerRewards, unlocks] = await Promise.all([
    // the reference lists no event operations in block 1 (the boot block's genesis allocations)
    b.block_height > 1 ? store.rosettaEvents(sql, b.index_block_hash, rows.map((r) => r.tx_id)) : Promise.resolve(new Map()),
    store.rosettaMinerRewards(sql, b.block_height),
    store.rosettaUnlocks(sql, b),
  ]);
  const ft = await ftLookup(pool, events.values());
  return rows.map((r) => {
    const tx = opsTx(r);
    const coinbase = tx.tx_type === 'coinbase';
    return rosettaTransaction(tx, {
      network,
      events: b.block_height > 1 ? (events.get(r.tx_id) ?? []) : undefined,
      minerRewards: coinbase ? minerRewards : undefined,
      unlocks: coinbase ? unlocks : undefined,
      ftMetadata: ft,
    });
  });
}

/** One mined tx with its operations (the block it is in gives the rewards and unlocks of a coinbase). */
export async function minedTransactionJson(sql: Sql, row: store.RosettaTxRow, network: RosettaNetwork, pool?: NodePool): Promise<RosettaTransaction> {
  const tx = opsTx(row);
  let minerRewards;
  let unlocks;
  if (tx.tx_type === 'coinbase') {
    const b = await store.rosettaBlockByHash(sql, row.block_hash);
    minerRewards = await store.rosettaMinerRewards(sql, row.block_height);
    unlocks = b ? await store.rosettaUnlocks(sql, b) : [];
  }
  const events = row.block_height > 1 ? ((await store.rosettaEvents(sql, row.index_block_hash, [row.tx_id])).get(row.tx_id) ?? []) : undefined;
  const ftMeta = await ftLookup(pool, events ? [events] : []);
  return rosettaTransaction(tx, { network, events, minerRewards, unlocks, ftMetadata: ftMeta });
}
