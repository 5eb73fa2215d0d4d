/**
 * PoX synthetic events: the `print` events of the boot pox-2 / pox-3 / pox-4 contracts, decoded the way the reference
 * does (stacker, locked, balance, burnchain_unlock_height, event name and data) including its balance "patches"
 * (stack-stx sets locked = lock-amount, stack-extend / stack-stx / delegate-stack-* set burnchain_unlock_height to the
 * event's unlock-burn-height, ...). Pure; decoding through the native codec.
 *
 * Also holds the few Clarity serialisers and PoX/BTC address helpers the synthetic burnchain txs need.
 */
import { codec } from './native.js';
import { normalizeHex } from './clarity.js';
import { base58Decode, segwitDecode } from './btc-address.js';

export const BOOT_ADDRESS = { mainnet: 'SP000000000000000000002Q6VF78', testnet: 'ST000000000000000000002AMW42H' } as const;
export type Network = keyof typeof BOOT_ADDRESS;

/** The boot contracts whose print events carry PoX synthetic events (pox-1 has none). */
export const POX_CONTRACT_NAMES = ['pox-2', 'pox-3', 'pox-4'] as const;
export type PoxContractName = (typeof POX_CONTRACT_NAMES)[number];

/** Every pox-2/3/4 contract id on both networks (the list the SQL partial index and queries use). */
export const POX_CONTRACT_IDS: readonly string[] = POX_CONTRACT_NAMES.flatMap((n) => [
  `${BOOT_ADDRESS.mainnet}.${n}`,
  `${BOOT_ADDRESS.testnet}.${n}`,
]);

/** The pox contract name (`pox-2` …) of a boot pox contract id, or null for any other contract. */
export function poxContractName(contractId: string): PoxContractName | null {
  const dot = contractId.indexOf('.');
  if (dot < 0) return null;
  const addr = contractId.slice(0, dot);
  const name = contractId.slice(dot + 1);
  if (addr !== BOOT_ADDRESS.mainnet && addr !== BOOT_ADDRESS.testnet) return null;
  return (POX_CONTRACT_NAMES as readonly string[]).includes(name) ? (name as PoxContractName) : null;
}

/** Network of a Stacks address by its version byte (SP/SM mainnet, ST/SN testnet). */
export function addressNetwork(address: string): Network {
  const [version] = codec.decodeStacksAddress(address.split('.')[0]);
  return version === 22 || version === 20 ? 'mainnet' : 'testnet';
}

// ---------------------------------------------------------------------------------------------------------------
// Decoded Clarity values (the codec's JSON form)

interface Cv {
  type_id: number;
  repr: string;
  hex: string;
  value?: unknown;
  data?: unknown;
  buffer?: string;
  address?: string;
  contract_name?: string;
}
const T = {
  UInt: 1,
  Buffer: 2,
  PrincipalStandard: 5,
  PrincipalContract: 6,
  ResponseOk: 7,
  ResponseError: 8,
  OptionalNone: 9,
  OptionalSome: 10,
  Tuple: 12,
  StringAscii: 13,
} as const;

function tupleData(v: Cv | undefined): Record<string, Cv> | null {
  return v && v.type_id === T.Tuple && v.data && typeof v.data === 'object' ? (v.data as Record<string, Cv>) : null;
}
function uintOf(v: Cv | undefined): bigint | null {
  return v && v.type_id === T.UInt ? BigInt(v.value as string) : null;
}
function principalOf(v: Cv | undefined): string | null {
  if (!v) return null;
  if (v.type_id === T.PrincipalStandard) return v.address!;
  if (v.type_id === T.PrincipalContract) return `${v.address}.${v.contract_name}`;
  return null;
}
function someOf(v: Cv | undefined): Cv | undefined {
  if (!v) return undefined;
  if (v.type_id === T.OptionalSome) return v.value as Cv;
  if (v.type_id === T.OptionalNone) return undefined;
  return v;
}

// ---------------------------------------------------------------------------------------------------------------
// PoX synthetic print events

export interface PoxEvent {
  name: string;
  stacker: string;
  locked: bigint;
  balance: bigint;
  burnchainUnlockHeight: bigint;
  /** version byte + hashbytes of the event's pox-addr (0x-hex), null when the event has none. */
  poxAddrRaw: string | null;
  /** pox-addr as a `{version, hashbytes}` tuple value (0x-hex Clarity serialisation), null when none. */
  poxAddrTupleHex: string | null;
  /** true when the event carries a `pox-addr` of `none` (the reference prints its raw form as `0x`). */
  poxAddrNone: boolean;
  /** Event-specific fields (snake_case, amounts/heights as bigint, principals as strings, absent → null). */
  data: Record<string, bigint | string | null>;
}

const UINT_FIELDS: Record<string, string[]> = {
  'handle-unlock': ['first-cycle-locked', 'first-unlocked-cycle'],
  'stack-stx': ['lock-amount', 'lock-period', 'start-burn-height', 'unlock-burn-height'],
  'stack-increase': ['increase-by', 'total-locked'],
  'stack-extend': ['extend-count', 'unlock-burn-height'],
  'delegate-stx': ['amount-ustx'],
  'delegate-stack-stx': ['lock-amount', 'unlock-burn-height', 'start-burn-height', 'lock-period'],
  'delegate-stack-increase': ['increase-by', 'total-locked'],
  'delegate-stack-extend': ['unlock-burn-height', 'extend-count'],
  'stack-aggregation-commit': ['reward-cycle', 'amount-ustx'],
  'stack-aggregation-commit-indexed': ['reward-cycle', 'amount-ustx'],
  'stack-aggregation-increase': ['reward-cycle', 'amount-ustx'],
  'revoke-delegate-stx': [],
};
const PRINCIPAL_FIELDS = ['delegate-to', 'delegator'];

/**
 * Decodes a pox-2/3/4 print value. Returns null for values that are not PoX synthetic events (a `(err ...)` print,
 * a non-tuple, an unknown event name, missing base fields) — where the reference would log or throw.
 */
export function decodePoxPrintEvent(valueHex: string): PoxEvent | null {
  let decoded: Cv;
  try {
    decoded = codec.decodeClarityValue(normalizeHex(valueHex)) as unknown as Cv;
  } catch {
    return null;
  }
  if (decoded.type_id !== T.ResponseOk) return null;
  const op = tupleData(decoded.value as Cv);
  if (!op) return null;
  const nameCv = op['name'];
  if (!nameCv || nameCv.type_id !== T.StringAscii) return null;
  const name = nameCv.data as string;
  const uintKeys = UINT_FIELDS[name];
  if (!uintKeys) return null;
  const stacker = principalOf(op['stacker']);
  const locked = uintOf(op['locked']);
  const balance = uintOf(op['balance']);
  const unlock = uintOf(op['burnchain-unlock-height']);
  const d = tupleData(op['data']);
  if (stacker === null || locked === null || balance === null || unlock === null || !d) return null;

  const data: Record<string, bigint | string | null> = {};
  for (const k of uintKeys) {
    const v = uintOf(d[k]);
    if (v === null) return null;
    data[k.replace(/-/g, '_')] = v;
  }
  for (const k of PRINCIPAL_FIELDS) if (k in d) data[k.replace(/-/g, '_')] = principalOf(d[k]);
  if ('unlock-burn-height' in d && !uintKeys.includes('unlock-burn-height')) {
    data.unlock_burn_height = uintOf(someOf(d['unlock-burn-height']));
  }
  const signerKey = d['signer-key'];
  if (signerKey) data.signer_key = signerKey.type_id === T.Buffer ? normalizeHex(signerKey.buffer!) : null;
  if ('end-cycle-id' in d) data.end_cycle_id = uintOf(someOf(d['end-cycle-id']));
  if ('start-cycle-id' in d) data.start_cycle_id = uintOf(d['start-cycle-id']);

  const ev: PoxEvent = {
    name,
    stacker,
    locked,
    balance,
    burnchainUnlockHeight: unlock,
    poxAddrRaw: null,
    poxAddrTupleHex: null,
    poxAddrNone: d['pox-addr']?.type_id === T.OptionalNone,
    data,
  };
  const addr = tupleData(someOf(d['pox-addr']));
  if (addr && addr['version']?.type_id === T.Buffer && addr['hashbytes']?.type_id === T.Buffer) {
    ev.poxAddrRaw = normalizeHex(addr['version'].buffer! + addr['hashbytes'].buffer!.replace(/^0x/, ''));
    ev.poxAddrTupleHex = someOf(d['pox-addr'])!.hex;
  }

  // The reference's balance patches (node events carried stale balances).
  const big = (k: string) => data[k] as bigint;
  switch (name) {
    case 'handle-unlock':
      ev.balance += ev.locked;
      break;
    case 'stack-stx':
    case 'delegate-stack-stx':
      ev.burnchainUnlockHeight = big('unlock_burn_height');
      ev.balance -= big('lock_amount');
      ev.locked = big('lock_amount');
      break;
    case 'stack-increase':
    case 'delegate-stack-increase':
      ev.balance -= big('increase_by');
      ev.locked += big('increase_by');
      break;
    case 'stack-extend':
    case 'delegate-stack-extend':
      ev.burnchainUnlockHeight = big('unlock_burn_height');
      break;
    case 'delegate-stx':
      if (data.unlock_burn_height) ev.burnchainUnlockHeight = data.unlock_burn_height as bigint;
      break;
  }
  return ev;
}

// ---------------------------------------------------------------------------------------------------------------
// Clarity serialisation (consensus encoding, 0x-hex)

const hexBody = (h: string) => normalizeHex(h).slice(2);

export const cv = {
  uint(v: bigint | number | string): string {
    const n = BigInt(v);
    if (n < 0n || n >= 1n << 128n) throw new Error(`uint out of range: ${n}`);
    return '0x01' + n.toString(16).padStart(32, '0');
  },
  buffer(hex: string): string {
    const b = hexBody(hex);
    return '0x02' + (b.length / 2).toString(16).padStart(8, '0') + b;
  },
  none(): string {
    return '0x09';
  },
  some(inner: string): string {
    return '0x0a' + hexBody(inner);
  },
  /** A standard or contract principal from its string form. */
  principal(p: string): string {
    const [addr, name] = p.split('.');
    const [version, hash] = codec.decodeStacksAddress(addr);
    const head = version.toString(16).padStart(2, '0') + hexBody(hash);
    if (name === undefined) return '0x05' + head;
    const nameHex = Buffer.from(name, 'ascii').toString('hex');
    return '0x06' + head + (nameHex.length / 2).toString(16).padStart(2, '0') + nameHex;
  },
  stringAscii(s: string): string {
    const h = Buffer.from(s, 'ascii').toString('hex');
    return '0x0d' + (h.length / 2).toString(16).padStart(8, '0') + h;
  },
  /** Tuple; keys are serialised in lexicographic order, as Clarity requires. */
  tuple(fields: Record<string, string>): string {
    const keys = Object.keys(fields).sort();
    let out = '0x0c' + keys.length.toString(16).padStart(8, '0');
    for (const k of keys) {
      const kh = Buffer.from(k, 'ascii').toString('hex');
      out += (kh.length / 2).toString(16).padStart(2, '0') + kh + hexBody(fields[k]);
    }
    return out;
  },
};

/** `{version: (buff 1), hashbytes: (buff N)}` tuple of a PoX address. */
export function poxAddrTuple(version: number, hashbytes: string): string {
  return cv.tuple({ version: cv.buffer(version.toString(16).padStart(2, '0')), hashbytes: cv.buffer(hashbytes) });
}

/** The PoX address tuple of a Stacks address used as a BTC address (the reference's c32ToB58 + poxAddressToTuple). */
export function stacksAddressPoxTuple(address: string): string {
  const [version, hash] = codec.decodeStacksAddress(address);
  // single-sig versions (SP/ST) map to p2pkh (0x00), multi-sig (SM/SN) to p2sh (0x01)
  return poxAddrTuple(version === 20 || version === 21 ? 1 : 0, hash);
}

// ---------------------------------------------------------------------------------------------------------------
// Bitcoin addresses → PoX address tuple (base58check p2pkh/p2sh, bech32 p2wpkh/p2wsh, bech32m p2tr)

// (base58check and bech32/bech32m decoding: src/chain/btc-address.ts)

/** PoX address tuple (0x-hex Clarity value) of a BTC address string, or null when it cannot be decoded. */
export function btcAddressPoxTuple(address: string): string | null {
  const seg = /^(bc|tb|bcrt)1/i.test(address) ? segwitDecode(address) : null;
  if (seg) {
    if (seg.version === 0 && seg.program.length === 20) return poxAddrTuple(4, seg.program.toString('hex'));
    if (seg.version === 0 && seg.program.length === 32) return poxAddrTuple(5, seg.program.toString('hex'));
    if (seg.version === 1 && seg.program.length === 32) return poxAddrTuple(6, seg.program.toString('hex'));
    return null;
  }
  const raw = base58Decode(address);
  if (!raw || raw.length !== 25) return null;
  const version = raw[0];
  const hash = raw.subarray(1, 21).toString('hex');
  if (version === 0x00 || version === 0x6f) return poxAddrTuple(0, hash);
  if (version === 0x05 || version === 0xc4) return poxAddrTuple(1, hash);
  return null;
}

// ---------------------------------------------------------------------------------------------------------------
// Rows for the pox_events table (sql/0008_pox.sql)

/** A decoded PoX print value, stored once per distinct value (keyed by md5(value_hex) in SQL). */
export interface PoxEventRow {
  value_hex: string;
  name: string;
  stacker: string;
  locked: string;
  balance: string;
  burnchain_unlock_height: string;
  pox_addr_raw: string | null;
}

/** The pox_events rows of a message's event rows: print events of the boot pox-2/3/4 contracts that decode. */
export function poxEventRows(
  events: readonly { event_type: string; topic: string | null; contract_id: string | null; value_hex: string | null }[],
): PoxEventRow[] {
  const out = new Map<string, PoxEventRow>();
  for (const e of events) {
    if (e.event_type !== 'smart_contract_log' || e.topic !== 'print' || !e.value_hex || !e.contract_id) continue;
    if (!poxContractName(e.contract_id) || out.has(e.value_hex)) continue;
    const d = decodePoxPrintEvent(e.value_hex);
    if (!d) continue;
    out.set(e.value_hex, {
      value_hex: e.value_hex,
      name: d.name,
      stacker: d.stacker,
      locked: d.locked.toString(),
      balance: d.balance.toString(),
      burnchain_unlock_height: d.burnchainUnlockHeight.toString(),
      pox_addr_raw: d.poxAddrRaw,
    });
  }
  return [...out.values()];
}
