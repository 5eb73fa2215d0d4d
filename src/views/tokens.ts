/** Pure JSON builders of the token and balance answers (rows from src/store/tokens.ts and balances.ts). */
import { clarityValue } from '../chain/clarity.js';
import { txJson } from './txs.js';
import type { TxDbRow } from '../store/txs.js';
import type { HoldingRow, NftEventRow } from '../store/tokens.js';
import type { AssetTotalsRow } from '../store/balances.js';

type Txs = Map<string, TxDbRow> | undefined;

/** `tx_id`, or with tx_metadata the whole tx (its events left out, as the reference prints it). */
function txPart(txId: string, txs: Txs): { tx_id: string } | { tx: Record<string, unknown> } | undefined {
  if (!txs) return { tx_id: txId };
  const row = txs.get(txId);
  return row ? { tx: txJson(row, { events: [], excludeFunctionArgs: false }) } : undefined;
}

const present = <T>(v: T | undefined): v is T => v !== undefined;

export function nftHoldingsJson(rows: HoldingRow[], txs: Txs) {
  return rows
    .map((r) => {
      const t = txPart(r.tx_id, txs);
      return t && { asset_identifier: r.asset_identifier, value: clarityValue(r.value_hex), block_height: r.block_height, ...t };
    })
    .filter(present);
}

export function nftHistoryJson(rows: NftEventRow[], txs: Txs) {
  return rows
    .map((r) => {
      const t = txPart(r.tx_id, txs);
      return t && { sender: r.sender, recipient: r.recipient, event_index: r.event_index, asset_event_type: r.asset_event_type, ...t };
    })
    .filter(present);
}

export function nftMintsJson(rows: NftEventRow[], txs: Txs) {
  return rows
    .map((r) => {
      const t = txPart(r.tx_id, txs);
      return t && { recipient: r.recipient, event_index: r.event_index, value: clarityValue(r.value_hex), ...t };
    })
    .filter(present);
}

/** Assets sorted as the reference sorts them (String.localeCompare). */
const byAsset = (a: AssetTotalsRow, b: AssetTotalsRow) => a.asset_identifier.localeCompare(b.asset_identifier);

export function ftBalancesJson(rows: AssetTotalsRow[]) {
  const out: Record<string, { balance: string; total_sent: string; total_received: string }> = {};
  for (const r of [...rows].sort(byAsset)) {
    out[r.asset_identifier] = {
      balance: (BigInt(r.received) - BigInt(r.sent)).toString(),
      total_sent: r.sent,
      total_received: r.received,
    };
  }
  return out;
}

export function nftCountsJson(rows: AssetTotalsRow[]) {
  const out: Record<string, { count: string; total_sent: string; total_received: string }> = {};
  for (const r of [...rows].sort(byAsset)) {
    out[r.asset_identifier] = {
      count: (BigInt(r.received) - BigInt(r.sent)).toString(),
      total_sent: r.sent,
      total_received: r.received,
    };
  }
  return out;
}
