/**
 * Guards in front of the native codec (@hirosystems/stacks-encoding-native-js 1.2.0), which never returns — it spins
 * at 100% CPU — when a serialized Clarity value holds an unknown type id (0x0f…0xff), at the top or nested in a list,
 * tuple, optional or response, and also when such a value sits inside a transaction (contract-call arguments, an NFT
 * post-condition's asset value, a token-transfer or coinbase recipient). One such byte in an observer message would
 * stop the whole service. These functions walk the wire format just far enough to find every Clarity value and check
 * its type ids; they decode nothing (the codec still does all decoding) and leave every other error (a short input,
 * an unknown variant elsewhere) to the codec, which reports those normally.
 *
 * Wire formats: SIP-005 (transactions) and the Clarity value serialization of stacks-core.
 */
import { PulseError } from '../errors.js';

export class MalformedWireError extends PulseError {}

/** Input that ends early: the codec reads in the same order and reports it (it does not spin on a short input). */
class Truncated extends PulseError {}

/** Deepest nesting accepted (Clarity's own limit on value depth is 32). */
const MAX_DEPTH = 64;

class Reader {
  constructor(
    readonly buf: Buffer,
    public at = 0,
  ) {}
  need(n: number, what: string): void {
    if (this.at + n > this.buf.length) throw new Truncated(`truncated ${what} at byte ${this.at}`);
  }
  skip(n: number, what: string): void {
    this.need(n, what);
    this.at += n;
  }
  u8(what: string): number {
    this.need(1, what);
    return this.buf[this.at++];
  }
  u16(what: string): number {
    this.need(2, what);
    const v = this.buf.readUInt16BE(this.at);
    this.at += 2;
    return v;
  }
  u32(what: string): number {
    this.need(4, what);
    const v = this.buf.readUInt32BE(this.at);
    this.at += 4;
    return v;
  }
  /** a length-prefixed (u8) name: contract, function, asset or tuple key */
  name(what: string): void {
    this.skip(this.u8(what), what);
  }
}

/** Walks one serialized Clarity value; throws MalformedWireError on an unknown type id or a value cut short. */
function clarityValue(r: Reader, depth: number): void {
  if (depth > MAX_DEPTH) throw new MalformedWireError(`Clarity value nested deeper than ${MAX_DEPTH}`);
  const at = r.at;
  const type = r.u8('Clarity value');
  switch (type) {
    case 0x00: // int
    case 0x01: // uint
      r.skip(16, 'Clarity integer');
      return;
    case 0x02: // buffer
    case 0x0d: // string-ascii
    case 0x0e: // string-utf8
      r.skip(r.u32('Clarity length'), 'Clarity buffer or string');
      return;
    case 0x03: // true
    case 0x04: // false
    case 0x09: // none
      return;
    case 0x05: // standard principal
      r.skip(21, 'Clarity principal');
      return;
    case 0x06: // contract principal
      r.skip(21, 'Clarity principal');
      r.name('Clarity contract name');
      return;
    case 0x07: // ok
    case 0x08: // err
    case 0x0a: // some
      clarityValue(r, depth + 1);
      return;
    case 0x0b: {
      // list
      const n = r.u32('Clarity list length');
      for (let i = 0; i < n; i++) clarityValue(r, depth + 1);
      return;
    }
    case 0x0c: {
      // tuple
      const n = r.u32('Clarity tuple length');
      for (let i = 0; i < n; i++) {
        r.name('Clarity tuple key');
        clarityValue(r, depth + 1);
      }
      return;
    }
    default:
      throw new MalformedWireError(`unknown Clarity type id 0x${type.toString(16).padStart(2, '0')} at byte ${at}`);
  }
}

function bytesOf(hex: string | Buffer): Buffer {
  if (typeof hex !== 'string') return hex;
  const h = hex.startsWith('0x') || hex.startsWith('0X') ? hex.slice(2) : hex;
  return Buffer.from(h, 'hex');
}

/** Throws MalformedWireError when a serialized Clarity value (hex) would make the codec spin. */
export function checkClarityValue(hex: string | Buffer): void {
  try {
    clarityValue(new Reader(bytesOf(hex)), 0);
  } catch (err) {
    if (!(err instanceof Truncated)) throw err;
  }
}

/** Throws MalformedWireError when the Clarity values of a serialized Stacks transaction (hex) would make the codec spin. */
export function checkTransaction(hex: string | Buffer): void {
  const r = new Reader(bytesOf(hex));
  try {
    walkTransaction(r);
  } catch (err) {
    // Only an unknown Clarity type id is ours to report; anything short or unknown elsewhere is the codec's to reject.
    if (!(err instanceof Truncated) && !(err instanceof Deferred)) throw err;
  }
}

/** A variant this walker does not know: the codec reads fields in the same order and rejects it there. */
class Deferred extends PulseError {}

function spendingCondition(r: Reader): void {
  const mode = r.u8('hash mode');
  r.skip(20 + 8 + 8, 'spending condition'); // signer, nonce, fee
  if (mode === 0x00 || mode === 0x02) {
    r.skip(1 + 65, 'single-sig spending condition'); // key encoding, signature
  } else if (mode === 0x01 || mode === 0x03 || mode === 0x05 || mode === 0x07) {
    const fields = r.u32('auth field count');
    for (let i = 0; i < fields; i++) {
      const t = r.u8('auth field');
      if (t === 0x00 || t === 0x01) r.skip(33, 'public key');
      else if (t === 0x02 || t === 0x03) r.skip(65, 'signature');
      else throw new Deferred();
    }
    r.u16('signatures required');
  } else {
    throw new Deferred();
  }
}

function assetInfo(r: Reader): void {
  r.skip(21, 'asset address');
  r.name('asset contract name');
  r.name('asset name');
}

function walkTransaction(r: Reader): void {
  r.skip(1 + 4, 'version and chain id');
  const auth = r.u8('auth type');
  if (auth !== 0x04 && auth !== 0x05) throw new Deferred();
  spendingCondition(r);
  if (auth === 0x05) spendingCondition(r);
  r.skip(2, 'anchor and post-condition modes');
  const conditions = r.u32('post-condition count');
  for (let i = 0; i < conditions; i++) {
    const kind = r.u8('post-condition asset type');
    const principal = r.u8('post-condition principal');
    if (principal === 0x02) r.skip(21, 'principal');
    else if (principal === 0x03) {
      r.skip(21, 'principal');
      r.name('contract name');
    } else if (principal !== 0x01) throw new Deferred();
    if (kind === 0x00) r.skip(1 + 8, 'STX post-condition');
    else if (kind === 0x01) {
      assetInfo(r);
      r.skip(1 + 8, 'fungible post-condition');
    } else if (kind === 0x02) {
      assetInfo(r);
      clarityValue(r, 0);
      r.skip(1, 'non-fungible condition code');
    } else throw new Deferred();
  }
  const payload = r.u8('payload type');
  switch (payload) {
    case 0x00: // token transfer: recipient principal (a Clarity value), amount, memo
      clarityValue(r, 0);
      return;
    case 0x02: {
      // contract call
      r.skip(21, 'contract address');
      r.name('contract name');
      r.name('function name');
      const args = r.u32('argument count');
      for (let i = 0; i < args; i++) clarityValue(r, 0);
      return;
    }
    case 0x05: // coinbase to an alternative recipient (a principal Clarity value)
      r.skip(32, 'coinbase payload');
      clarityValue(r, 0);
      return;
    case 0x08: // Nakamoto coinbase: payload, optional recipient (a Clarity value), VRF proof
      r.skip(32, 'coinbase payload');
      clarityValue(r, 0);
      return;
    default: // smart contracts, poison microblocks, coinbase, tenure changes: no Clarity value
      return;
  }
}
