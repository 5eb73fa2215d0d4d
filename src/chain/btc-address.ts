/**
 * Bitcoin address strings: validation (what bitcoinjs-lib's toOutputScript accepts on mainnet, testnet and regtest:
 * base58check p2pkh/p2sh, bech32 v0, bech32m v1+), the Stacks → BTC conversion the reference applies to a Stacks
 * address given where a BTC address is expected, and the PoX address tuple (version, hashbytes) → BTC address.
 */
import { createHash } from 'node:crypto';
import { codec } from './native.js';

const B58 = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';

const sha256d = (b: Buffer): Buffer => createHash('sha256').update(createHash('sha256').update(b).digest()).digest();

export function base58Decode(s: string): Buffer | null {
  let n = 0n;
  for (const c of s) {
    const i = B58.indexOf(c);
    if (i < 0) return null;
    n = n * 58n + BigInt(i);
  }
  let hex = n === 0n ? '' : n.toString(16);
  if (hex.length % 2) hex = '0' + hex;
  let zeros = 0;
  while (zeros < s.length && s[zeros] === '1') zeros++;
  return Buffer.concat([Buffer.alloc(zeros), Buffer.from(hex, 'hex')]);
}

function base58Encode(b: Buffer): string {
  let n = BigInt('0x' + (b.toString('hex') || '0'));
  let out = '';
  while (n > 0n) {
    out = B58[Number(n % 58n)] + out;
    n /= 58n;
  }
  for (const byte of b) {
    if (byte !== 0) break;
    out = '1' + out;
  }
  return out;
}

function base58Check(version: number, payload: Buffer): string {
  const body = Buffer.concat([Buffer.from([version]), payload]);
  return base58Encode(Buffer.concat([body, sha256d(body).subarray(0, 4)]));
}

const BECH32 = 'qpzry9x8gf2tvdw0s3jn54khce6mua7l';
const BECH32M_CONST = 0x2bc830a3;

function polymod(values: number[]): number {
  const G = [0x3b6a57b2, 0x26508e6d, 0x1ea119fa, 0x3d4233dd, 0x2a1462b3];
  let chk = 1;
  for (const v of values) {
    const b = chk >>> 25;
    chk = ((chk & 0x1ffffff) << 5) ^ v;
    for (let i = 0; i < 5; i++) if ((b >>> i) & 1) chk ^= G[i];
  }
  return chk >>> 0;
}

const hrpExpand = (hrp: string): number[] => [...[...hrp].map((c) => c.charCodeAt(0) >> 5), 0, ...[...hrp].map((c) => c.charCodeAt(0) & 31)];

function convertBits(data: number[], from: number, to: number, pad: boolean): number[] | null {
  let acc = 0;
  let bits = 0;
  const out: number[] = [];
  const maxv = (1 << to) - 1;
  for (const v of data) {
    acc = (acc << from) | v;
    bits += from;
    while (bits >= to) {
      bits -= to;
      out.push((acc >> bits) & maxv);
    }
  }
  if (pad) {
    if (bits > 0) out.push((acc << (to - bits)) & maxv);
  } else if (bits >= from || ((acc << (to - bits)) & maxv)) {
    return null;
  }
  return out;
}

export function segwitDecode(addr: string): { hrp: string; version: number; program: Buffer } | null {
  if (addr !== addr.toLowerCase() && addr !== addr.toUpperCase()) return null;
  const s = addr.toLowerCase();
  const pos = s.lastIndexOf('1');
  if (pos < 1 || pos + 7 > s.length || s.length > 90) return null;
  const hrp = s.slice(0, pos);
  const data: number[] = [];
  for (const c of s.slice(pos + 1)) {
    const i = BECH32.indexOf(c);
    if (i < 0) return null;
    data.push(i);
  }
  const check = polymod([...hrpExpand(hrp), ...data]);
  const version = data[0];
  if (version > 16) return null;
  if (check !== (version === 0 ? 1 : BECH32M_CONST)) return null;
  const prog = convertBits(data.slice(1, -6), 5, 8, false);
  if (!prog || prog.length < 2 || prog.length > 40) return null;
  if (version === 0 && prog.length !== 20 && prog.length !== 32) return null;
  if (version === 1 && prog.length !== 32) return null;
  return { hrp, version, program: Buffer.from(prog) };
}

function segwitEncode(hrp: string, version: number, program: Buffer): string {
  const data = [version, ...convertBits([...program], 8, 5, true)!];
  const mod = polymod([...hrpExpand(hrp), ...data, 0, 0, 0, 0, 0, 0]) ^ (version === 0 ? 1 : BECH32M_CONST);
  const check = [0, 1, 2, 3, 4, 5].map((i) => (mod >> (5 * (5 - i))) & 31);
  return hrp + '1' + [...data, ...check].map((d) => BECH32[d]).join('');
}

/** A BTC address bitcoinjs-lib would turn into an output script on mainnet, testnet or regtest. */
export function isValidBitcoinAddress(address: string): boolean {
  if (/^(bc|tb|bcrt)1/i.test(address)) {
    const seg = segwitDecode(address);
    return seg !== null && ['bc', 'tb', 'bcrt'].includes(seg.hrp);
  }
  const raw = base58Decode(address);
  if (!raw || raw.length !== 25) return false;
  if (!sha256d(raw.subarray(0, 21)).subarray(0, 4).equals(raw.subarray(21))) return false;
  return [0x00, 0x05, 0x6f, 0xc4].includes(raw[0]);
}

/** The BTC address of a Stacks address (the reference's c32 → b58 conversion), or null when it is not one. */
export function stacksToBtcAddress(address: string): string | null {
  try {
    return codec.stacksToBitcoinAddress(address);
  } catch {
    return null;
  }
}

/**
 * The burnchain address a route parameter names: a BTC address as written, else a Stacks address converted to BTC,
 * else null (the reference's order; the value is trimmed first).
 */
export function burnchainAddressOf(value: string): string | null {
  const v = value.trim();
  if (isValidBitcoinAddress(v)) return v;
  return stacksToBtcAddress(v);
}

/**
 * A PoX address (`version` byte and `hashbytes` of the pox-addr tuple) as a BTC address string, on the network of the
 * chain (`mainnet` → `bc` / 0x00 / 0x05, otherwise testnet forms `tb` / 0x6f / 0xc4). Null when the version is unknown
 * or the hash has the wrong length.
 */
export function poxAddressToBtc(version: number, hashbytes: Buffer, mainnet: boolean): string | null {
  switch (version) {
    case 0: // p2pkh
      return hashbytes.length === 20 ? base58Check(mainnet ? 0x00 : 0x6f, hashbytes) : null;
    case 1: // p2sh
    case 2: // p2sh-p2wpkh
    case 3: // p2sh-p2wsh
      return hashbytes.length === 20 ? base58Check(mainnet ? 0x05 : 0xc4, hashbytes) : null;
    case 4: // p2wpkh
      return hashbytes.length === 20 ? segwitEncode(mainnet ? 'bc' : 'tb', 0, hashbytes) : null;
    case 5: // p2wsh
      return hashbytes.length === 32 ? segwitEncode(mainnet ? 'bc' : 'tb', 0, hashbytes) : null;
    case 6: // p2tr
      return hashbytes.length === 32 ? segwitEncode(mainnet ? 'bc' : 'tb', 1, hashbytes) : null;
    default:
      return null;
  }
}
