/**
 * Which transactions the reference's Construction API can read. The reference v8.13.6 deserializes every transaction
 * it is handed (/construction/parse, /hash, /combine) with @stacks/transactions 6.11.3 and answers a 500 when that
 * throws; we decode with v7, which reads more of the wire format. A transaction v7 reads but 6.11.3 does not is one the
 * reference cannot answer, so we refuse it the same way as an unreadable string (400, code 628).
 *
 * What 6.11.3 does not know, compared with v7 (its PayloadType and AddressHashMode enums and its multisig check):
 *  - payload types 7 (tenure change) and 8 (Nakamoto coinbase): "Cannot recognize PayloadType";
 *  - hash modes 5 and 7 (non-sequential multisig), in the origin or the sponsor condition;
 *  - a P2SH (hash mode 1) multisig condition with an uncompressed public key or signature (6.11.3 refuses
 *    uncompressed keys there, v7 refuses them under P2WSH instead);
 *  - a versioned smart contract (payload 6) whose code is over 100,000 bytes (6.11.3 applies that limit to both
 *    contract payloads, v7 only to the unversioned one).
 * The other direction (a P2WSH condition with an uncompressed key: v7 refuses, 6.11.3 reads it) cannot be mined and
 * stays a 400 here.
 */
import { createHash } from 'node:crypto';
import { PubKeyEncoding, PayloadType, StacksWireType, publicKeyIsCompressed, type StacksTransactionWire } from '@stacks/transactions';

/** Payload types @stacks/transactions 6.11.3 reads (0–6). */
const V6_PAYLOAD_TYPES = new Set([0, 1, 2, 3, 4, 5, 6]);
/** Hash modes it reads: P2PKH, P2SH, P2WPKH, P2WSH. */
const V6_HASH_MODES = new Set([0, 1, 2, 3]);
/** Its limit on a contract's code (v7 allows more for a versioned contract). */
const V6_MAX_CODE_BYTES = 100_000;

interface Condition {
  hashMode: number;
  fields?: { pubKeyEncoding: number; contents: { type: number; data: unknown } }[];
}

/** 6.11.3's "uncompressed" for a multisig field: a signature field marked uncompressed, or a key serialized as 65 bytes. */
function uncompressedField(f: NonNullable<Condition['fields']>[number]): boolean {
  if (f.contents.type === StacksWireType.MessageSignature) return f.pubKeyEncoding === PubKeyEncoding.Uncompressed;
  // a field typed "uncompressed key" carries a 33-byte key on the wire (v7 expands it when reading); one typed
  // "compressed" keeps the bytes it was sent with
  return f.pubKeyEncoding === PubKeyEncoding.Compressed && !publicKeyIsCompressed(f.contents.data as Uint8Array);
}

function conditionReadable(c: Condition | undefined): boolean {
  if (!c) return true;
  if (!V6_HASH_MODES.has(c.hashMode)) return false;
  return !(c.hashMode === 1 && c.fields?.some(uncompressedField));
}

/** True when @stacks/transactions 6.11.3 (the reference's reader) would read this transaction too. */
export function readableByReference(tx: StacksTransactionWire): boolean {
  const p = tx.payload as { payloadType: number; codeBody?: { content: string } };
  if (!V6_PAYLOAD_TYPES.has(p.payloadType)) return false;
  if (p.payloadType === PayloadType.VersionedSmartContract && Buffer.byteLength(p.codeBody?.content ?? '', 'utf8') > V6_MAX_CODE_BYTES) return false;
  const auth = tx.auth as { spendingCondition?: Condition; sponsorSpendingCondition?: Condition };
  return conditionReadable(auth.spendingCondition) && conditionReadable(auth.sponsorSpendingCondition);
}

const MEMO_BYTES = 34;

/**
 * The txid the reference computes for a transaction it read: the hash of 6.11.3's re-serialization, not of the bytes
 * sent. Both libraries re-encode a token transfer's memo through a UTF-8 string, so a memo that is not UTF-8 comes back
 * longer; v7 then drops the trailing NULs before padding to 34 bytes, 6.11.3 keeps them. Everything else re-serializes
 * alike (checked against 6.11.3 over the fixtures' transactions and mutations of them), so this is v7's serialization
 * with 6.11.3's memo.
 */
export function referenceTxid(tx: StacksTransactionWire, sent: Uint8Array): string {
  const bytes = tx.serializeBytes();
  const p = tx.payload as { payloadType: number; memo?: { content: string } };
  if (p.payloadType !== PayloadType.TokenTransfer || !p.memo) return tx.txid();
  const v7Memo = Math.max(MEMO_BYTES, Buffer.byteLength(p.memo.content, 'utf8'));
  const start = bytes.length - v7Memo;
  const raw = Buffer.from(sent.subarray(start, start + MEMO_BYTES));
  const decoded = Buffer.from(new TextDecoder().decode(raw), 'utf8');
  const memo = decoded.length >= MEMO_BYTES ? decoded : Buffer.concat([decoded, Buffer.alloc(MEMO_BYTES - decoded.length)]);
  const full = Buffer.concat([bytes.subarray(0, start), memo]);
  return createHash('sha512-256').update(full).digest('hex');
}
