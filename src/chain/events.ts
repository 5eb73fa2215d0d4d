// Node `/new_block` / `/new_microblocks` events -> stored event fields and the reference API JSON.
import { clarityValue, normalizeHex, type ClarityJson } from './clarity.js';

/** One element of a node message's `events[]` (already validated for shape by the observer). */
export interface NodeEvent {
  txid: string;
  event_index: number;
  committed: boolean;
  type: string;
  [payload: string]: unknown;
}

export type EventType =
  | 'smart_contract_log'
  | 'stx_asset'
  | 'fungible_token_asset'
  | 'non_fungible_token_asset'
  | 'stx_lock';

export type AssetEventType = 'transfer' | 'mint' | 'burn';

export type EventJson =
  | {
      event_index: number;
      event_type: 'smart_contract_log';
      tx_id: string;
      contract_log: { contract_id: string; topic: string; value: ClarityJson };
    }
  | {
      event_index: number;
      event_type: 'stx_asset';
      tx_id: string;
      asset: { asset_event_type: AssetEventType; sender: string; recipient: string; amount: string; memo?: string };
    }
  | {
      event_index: number;
      event_type: 'fungible_token_asset';
      tx_id: string;
      asset: { asset_event_type: AssetEventType; asset_id: string; sender: string; recipient: string; amount: string };
    }
  | {
      event_index: number;
      event_type: 'non_fungible_token_asset';
      tx_id: string;
      asset: { asset_event_type: AssetEventType; asset_id: string; sender: string; recipient: string; value: ClarityJson };
    }
  | {
      event_index: number;
      event_type: 'stx_lock';
      tx_id: string;
      stx_lock_event: { locked_amount: string; unlock_height: number; locked_address: string };
    };

export interface ChainEvent {
  /** Index within the transaction once normalized (see txEventsFromNode); the node's block-wide index before. */
  eventIndex: number;
  /** The node's block-wide event index (ordering key inside a block). */
  nodeEventIndex: number;
  txId: string;
  eventType: EventType;
  assetEventType: AssetEventType | null;
  sender: string | null;
  recipient: string | null;
  /** Decimal string: STX/FT amount, or locked amount for stx_lock. */
  amount: string | null;
  assetIdentifier: string | null;
  /** Serialized Clarity value: NFT id or contract-log payload. */
  valueHex: string | null;
  contractId: string | null;
  topic: string | null;
  lockedAddress: string | null;
  unlockHeight: number | null;
  /** 0x memo of an STX transfer when the node sent a non-empty one. */
  memo: string | null;
  api: EventJson;
}

type Obj = Record<string, unknown>;

function body(ev: NodeEvent): Obj {
  const b = ev[ev.type];
  if (!b || typeof b !== 'object') throw new Error(`event ${ev.type} of ${ev.txid} has no payload`);
  return b as Obj;
}

function str(o: Obj, k: string): string {
  const v = o[k];
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'bigint') return String(v);
  throw new Error(`event field ${k} missing`);
}

function optStr(o: Obj, k: string): string | null {
  const v = o[k];
  return typeof v === 'string' && v !== '' ? v : null;
}

function dec(o: Obj, k: string): string {
  return BigInt(str(o, k)).toString(10);
}

const ASSET_KIND: Record<string, ['stx' | 'ft' | 'nft', AssetEventType]> = {
  stx_transfer_event: ['stx', 'transfer'],
  stx_mint_event: ['stx', 'mint'],
  stx_burn_event: ['stx', 'burn'],
  ft_transfer_event: ['ft', 'transfer'],
  ft_mint_event: ['ft', 'mint'],
  ft_burn_event: ['ft', 'burn'],
  nft_transfer_event: ['nft', 'transfer'],
  nft_mint_event: ['nft', 'mint'],
  nft_burn_event: ['nft', 'burn'],
};

/** True for node event types this module understands. */
export function isKnownNodeEventType(type: string): boolean {
  return type === 'contract_event' || type === 'stx_lock_event' || type in ASSET_KIND;
}

/**
 * Convert one node event. `eventIndex` defaults to the node's (block-wide) index; the reference shows
 * per-transaction indexes, which txEventsFromNode assigns. Returns null for unknown event types.
 */
export function nodeEventToEvent(ev: NodeEvent, eventIndex: number = ev.event_index): ChainEvent | null {
  const txId = normalizeHex(ev.txid);
  const base = {
    eventIndex,
    nodeEventIndex: ev.event_index,
    txId,
    assetEventType: null,
    sender: null,
    recipient: null,
    amount: null,
    assetIdentifier: null,
    valueHex: null,
    contractId: null,
    topic: null,
    lockedAddress: null,
    unlockHeight: null,
    memo: null,
  } satisfies Omit<ChainEvent, 'eventType' | 'api'>;

  if (ev.type === 'contract_event') {
    const b = body(ev);
    const value = clarityValue(str(b, 'raw_value'));
    const contractId = str(b, 'contract_identifier');
    const topic = str(b, 'topic');
    return {
      ...base,
      eventType: 'smart_contract_log',
      valueHex: value.hex,
      contractId,
      topic,
      api: {
        event_index: eventIndex,
        event_type: 'smart_contract_log',
        tx_id: txId,
        contract_log: { contract_id: contractId, topic, value },
      },
    };
  }

  if (ev.type === 'stx_lock_event') {
    const b = body(ev);
    const lockedAmount = dec(b, 'locked_amount');
    const unlockHeight = Number(str(b, 'unlock_height'));
    const lockedAddress = str(b, 'locked_address');
    return {
      ...base,
      eventType: 'stx_lock',
      amount: lockedAmount,
      lockedAddress,
      unlockHeight,
      contractId: optStr(b, 'contract_identifier'),
      api: {
        event_index: eventIndex,
        event_type: 'stx_lock',
        tx_id: txId,
        stx_lock_event: { locked_amount: lockedAmount, unlock_height: unlockHeight, locked_address: lockedAddress },
      },
    };
  }

  const kind = ASSET_KIND[ev.type];
  if (!kind) return null;
  const [asset, action] = kind;
  const b = body(ev);
  const sender = action === 'mint' ? null : str(b, 'sender');
  const recipient = action === 'burn' ? null : str(b, 'recipient');

  if (asset === 'stx') {
    const amount = dec(b, 'amount');
    const rawMemo = action === 'transfer' ? optStr(b, 'memo') : null;
    const memo = rawMemo ? normalizeHex(rawMemo) : null;
    const assetJson: Extract<EventJson, { event_type: 'stx_asset' }>['asset'] = {
      asset_event_type: action,
      sender: sender ?? '',
      recipient: recipient ?? '',
      amount,
    };
    if (memo) assetJson.memo = memo;
    return {
      ...base,
      eventType: 'stx_asset',
      assetEventType: action,
      sender,
      recipient,
      amount,
      memo,
      api: { event_index: eventIndex, event_type: 'stx_asset', tx_id: txId, asset: assetJson },
    };
  }

  const assetIdentifier = str(b, 'asset_identifier');
  if (asset === 'ft') {
    const amount = dec(b, 'amount');
    return {
      ...base,
      eventType: 'fungible_token_asset',
      assetEventType: action,
      sender,
      recipient,
      amount,
      assetIdentifier,
      api: {
        event_index: eventIndex,
        event_type: 'fungible_token_asset',
        tx_id: txId,
        asset: { asset_event_type: action, asset_id: assetIdentifier, sender: sender ?? '', recipient: recipient ?? '', amount },
      },
    };
  }

  const value = clarityValue(str(b, 'raw_value'));
  return {
    ...base,
    eventType: 'non_fungible_token_asset',
    assetEventType: action,
    sender,
    recipient,
    assetIdentifier,
    valueHex: value.hex,
    api: {
      event_index: eventIndex,
      event_type: 'non_fungible_token_asset',
      tx_id: txId,
      asset: { asset_event_type: action, asset_id: assetIdentifier, sender: sender ?? '', recipient: recipient ?? '', value },
    },
  };
}

/** Same event with another per-transaction index (api.event_index follows). */
export function withEventIndex(ev: ChainEvent, eventIndex: number): ChainEvent {
  return { ...ev, eventIndex, api: { ...ev.api, event_index: eventIndex } };
}

/**
 * The events the reference keeps for each transaction of one node message, keyed by lowercase tx id:
 * uncommitted events and events of transactions whose status is not "success" are dropped, unknown
 * types are skipped, and the rest are ordered by the node's index and renumbered 0..n-1 per tx
 * (so `event_count` = length). `isTxSuccess` gets the lowercase 0x tx id.
 */
export function txEventsFromNode(
  events: readonly NodeEvent[],
  isTxSuccess: (txId: string) => boolean,
): Map<string, ChainEvent[]> {
  const byTx = new Map<string, ChainEvent[]>();
  for (const ev of events) {
    if (!ev.committed) continue;
    const txId = normalizeHex(ev.txid);
    if (!isTxSuccess(txId)) continue;
    const converted = nodeEventToEvent(ev);
    if (!converted) continue;
    let list = byTx.get(txId);
    if (!list) byTx.set(txId, (list = []));
    list.push(converted);
  }
  for (const [txId, list] of byTx) {
    list.sort((a, b) => a.nodeEventIndex - b.nodeEventIndex);
    byTx.set(txId, list.map((e, i) => withEventIndex(e, i)));
  }
  return byTx;
}
