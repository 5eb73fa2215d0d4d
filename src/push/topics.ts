/**
 * Room names of the real-time push (Socket.IO rooms; JSON-RPC topics map onto the same names). One room per thing a
 * client can follow; the Socket.IO event name is the room name, except `reorg`, which is sent to the `block` room.
 */
import { isPrincipal } from '../chain/principal.js';

export const STATIC_ROOMS = ['block', 'microblock', 'mempool', 'nft-event', 'burn-block', 'tenure'] as const;

export const rooms = {
  block: 'block',
  microblock: 'microblock',
  mempool: 'mempool',
  nftEvent: 'nft-event',
  burnBlock: 'burn-block',
  tenure: 'tenure',
  transaction: (txId: string) => `transaction:${txId}`,
  addressTransaction: (principal: string) => `address-transaction:${principal}`,
  addressStxBalance: (principal: string) => `address-stx-balance:${principal}`,
  addressMempool: (principal: string) => `address-mempool:${principal}`,
  nftAssetEvent: (asset: string, valueHex: string) => `nft-asset-event:${asset}+${valueHex}`,
  nftCollectionEvent: (asset: string) => `nft-collection-event:${asset}`,
  contractEvent: (contractId: string) => `contract-event:${contractId}`,
  addressFtBalance: (principal: string) => `address-ft-balance:${principal}`,
  addressNftEvent: (principal: string) => `address-nft-event:${principal}`,
  /** a BNS v1 name (`name.namespace`): its /v1/names/{name} answer on every change */
  bnsName: (fqn: string) => `bns-name:${fqn}`,
  /** a hook's payloads (the body its webhook gets), for the API key that created it only */
  hook: (uuid: string) => `hook:${uuid.toLowerCase()}`,
} as const;

/** A hook's uuid, lowercase (rooms are exact strings: the room of a hook is always spelt this way). */
export const HOOK_UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** The uuid of a `hook:<uuid>` room, or undefined for any other room. */
export function hookRoomUuid(room: string): string | undefined {
  return room.startsWith('hook:') && HOOK_UUID_RE.test(room.slice(5)) ? room.slice(5) : undefined;
}

/** `name.namespace`: two non-empty labels without spaces */
export const BNS_NAME_RE = /^[^\s.]+\.[^\s.]+$/;

const HEX_RE = /^(0x)?[0-9a-fA-F]+$/;

/** `<contract principal>::<token name>` */
function isAssetIdentifier(s: string): boolean {
  const i = s.indexOf('::');
  return i > 0 && s.length > i + 2 && isPrincipal(s.slice(0, i)) && s.slice(0, i).includes('.');
}

/**
 * Whether a client may join `room`, as the reference validates it (tx ids: any hex, as the reference accepts
 * `transaction:0x1234`; principals: standard or contract; asset rooms: `<contract>::<token>`).
 */
export function isValidRoom(room: string): boolean {
  if ((STATIC_ROOMS as readonly string[]).includes(room)) return true;
  const colon = room.indexOf(':');
  if (colon < 0) return false;
  const kind = room.slice(0, colon);
  const value = room.slice(colon + 1);
  switch (kind) {
    case 'transaction':
      return HEX_RE.test(value);
    case 'address-transaction':
    case 'address-stx-balance':
    case 'address-mempool':
    case 'address-ft-balance':
    case 'address-nft-event':
      return isPrincipal(value);
    case 'contract-event':
      return isPrincipal(value) && value.includes('.');
    case 'nft-asset-event': {
      const plus = value.lastIndexOf('+');
      return plus > 0 && isAssetIdentifier(value.slice(0, plus)) && value.length > plus + 1;
    }
    case 'nft-collection-event':
      return isAssetIdentifier(value);
    case 'bns-name':
      return BNS_NAME_RE.test(value);
    case 'hook':
      return HOOK_UUID_RE.test(value);
    default:
      return false;
  }
}

/** Splits a `subscriptions` handshake value (string or repeated) into room names; empty names are dropped. */
export function splitRoomList(raw: unknown): string[] {
  const parts = (Array.isArray(raw) ? raw : [raw]).filter((x): x is string => typeof x === 'string');
  return parts.flatMap((p) => p.split(',')).filter((r) => r !== '');
}

/** The invalid rooms of a list, in order (empty when all are valid). */
export function invalidRooms(list: string[]): string[] {
  return list.filter((r) => !isValidRoom(r));
}
