// Clarity values and types: hex/repr rendering and type strings, as the reference API prints them.
import { codec } from './native.js';

export interface ClarityJson {
  hex: string;
  repr: string;
}

/** Lowercase 0x-prefixed hex of a hex string given with or without a prefix. */
export function normalizeHex(hex: string): string {
  const body = hex.startsWith('0x') || hex.startsWith('0X') ? hex.slice(2) : hex;
  return '0x' + body.toLowerCase();
}

/** `{ hex, repr }` of a serialized Clarity value. Throws on malformed input. */
export function clarityValue(hex: string): ClarityJson {
  const h = normalizeHex(hex);
  return { hex: h, repr: codec.decodeClarityValueToRepr(h) };
}

/** Clarity type string derived from a serialized value, e.g. "uint", "(buff 20)", "(tuple (a uint))". */
export function clarityTypeName(hex: string): string {
  return codec.decodeClarityValueToTypeName(normalizeHex(hex));
}

/** Type of an argument or field in a contract ABI, as the node sends it in `contract_abi`. */
export type ClarityAbiType =
  | string
  | { buffer: { length: number } }
  | { 'string-ascii': { length: number } }
  | { 'string-utf8': { length: number } }
  | { response: { ok: ClarityAbiType; error: ClarityAbiType } }
  | { optional: ClarityAbiType }
  | { tuple: { name: string; type: ClarityAbiType }[] }
  | { list: { type: ClarityAbiType; length: number } };

/** Clarity type string of an ABI type, e.g. "uint", "(optional (buff 65))", "(list 10 principal)". */
export function abiTypeToString(t: ClarityAbiType): string {
  if (typeof t === 'string') {
    if (t === 'uint128') return 'uint';
    if (t === 'int128') return 'int';
    return t; // bool, principal, trait_reference, none
  }
  if ('buffer' in t) return `(buff ${t.buffer.length})`;
  if ('string-ascii' in t) return `(string-ascii ${t['string-ascii'].length})`;
  if ('string-utf8' in t) return `(string-utf8 ${t['string-utf8'].length})`;
  if ('response' in t) return `(response ${abiTypeToString(t.response.ok)} ${abiTypeToString(t.response.error)})`;
  if ('optional' in t) return `(optional ${abiTypeToString(t.optional)})`;
  if ('tuple' in t) return `(tuple ${t.tuple.map(f => `(${f.name} ${abiTypeToString(f.type)})`).join(' ')})`;
  if ('list' in t) return `(list ${t.list.length} ${abiTypeToString(t.list.type)})`;
  throw new Error(`unsupported Clarity ABI type: ${JSON.stringify(t)}`);
}
