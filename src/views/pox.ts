/**
 * PoX synthetic events as /extended/v1/{pox2,pox3,pox4}/… print them: the print value of a boot pox contract decoded
 * (src/chain/pox.ts, with the reference's balance patches), its placement from the events row, the pox address as a
 * BTC address on the contract's network, and per event name the data fields the reference's serializer lists
 * (including its quirks: `handle-unlock` repeats first_unlocked_cycle as first_cycle_locked; pox-2/pox-3 events carry
 * signer_key / start_cycle_id / end_cycle_id as null; delegate-stx leaves unlock_burn_height out when it has none).
 * Pure.
 */
import { decodePoxPrintEvent, BOOT_ADDRESS, type PoxEvent } from '../chain/pox.js';
import { poxAddressToBtc } from '../chain/btc-address.js';
import { createHash } from 'node:crypto';
import { codec } from '../chain/native.js';
import type { PoxCycleRow, PoxEventPlacement, PoxSignerRow } from '../store/pox.js';

type Data = Record<string, string | null | undefined>;

const str = (v: bigint | string | null | undefined): string | null => (v === null || v === undefined ? null : v.toString());

/** The BTC address of a decoded event's pox address (null when it has none or it does not encode). */
export function poxAddrString(ev: PoxEvent, mainnet: boolean): string | null {
  if (!ev.poxAddrRaw) return null;
  const raw = Buffer.from(ev.poxAddrRaw.slice(2), 'hex');
  if (raw.length < 1) return null;
  return poxAddressToBtc(raw[0], raw.subarray(1), mainnet);
}

function eventData(ev: PoxEvent, pox4: boolean): Data {
  const d = ev.data;
  const cycles: Data = {
    end_cycle_id: pox4 ? str(d.end_cycle_id) : null,
    start_cycle_id: pox4 ? str(d.start_cycle_id) : null,
  };
  const signer = pox4 ? ((d.signer_key as string | null | undefined) ?? null) : null;
  switch (ev.name) {
    case 'handle-unlock':
      return { first_cycle_locked: str(d.first_unlocked_cycle), first_unlocked_cycle: str(d.first_unlocked_cycle) };
    case 'stack-stx':
      return {
        lock_amount: str(d.lock_amount),
        lock_period: str(d.lock_period),
        start_burn_height: str(d.start_burn_height),
        unlock_burn_height: str(d.unlock_burn_height),
        signer_key: signer,
        ...cycles,
      };
    case 'stack-increase':
      return { increase_by: str(d.increase_by), total_locked: str(d.total_locked), signer_key: signer, ...cycles };
    case 'stack-extend':
      return { extend_count: str(d.extend_count), unlock_burn_height: str(d.unlock_burn_height), signer_key: signer, ...cycles };
    case 'delegate-stx': {
      const out: Data = { amount_ustx: str(d.amount_ustx), delegate_to: str(d.delegate_to), ...cycles };
      if (d.unlock_burn_height !== null && d.unlock_burn_height !== undefined) out.unlock_burn_height = str(d.unlock_burn_height);
      return out;
    }
    case 'delegate-stack-stx':
      return {
        lock_amount: str(d.lock_amount),
        unlock_burn_height: str(d.unlock_burn_height),
        start_burn_height: str(d.start_burn_height),
        lock_period: str(d.lock_period),
        delegator: str(d.delegator),
        ...cycles,
      };
    case 'delegate-stack-increase':
      return { increase_by: str(d.increase_by), total_locked: str(d.total_locked), delegator: str(d.delegator), ...cycles };
    case 'delegate-stack-extend':
      return {
        unlock_burn_height: str(d.unlock_burn_height),
        extend_count: str(d.extend_count),
        delegator: str(d.delegator),
        ...cycles,
      };
    case 'stack-aggregation-commit':
    case 'stack-aggregation-commit-indexed':
      return { reward_cycle: str(d.reward_cycle), amount_ustx: str(d.amount_ustx), signer_key: signer, ...cycles };
    case 'stack-aggregation-increase':
      return { reward_cycle: str(d.reward_cycle), amount_ustx: str(d.amount_ustx), ...cycles };
    case 'revoke-delegate-stx':
      return { delegate_to: str(d.delegate_to), ...cycles };
    default:
      return {};
  }
}

/** One event as the reference prints it, or null when the stored value is not a PoX synthetic event. */
export function poxEventJson(row: PoxEventPlacement) {
  const ev = decodePoxPrintEvent(row.value_hex);
  if (!ev) return null;
  const mainnet = row.contract_id.startsWith(BOOT_ADDRESS.mainnet + '.');
  const pox4 = row.contract_id.endsWith('.pox-4');
  return {
    block_height: Number(row.block_height),
    tx_id: row.tx_id,
    tx_index: row.tx_index,
    event_index: row.event_index,
    stacker: ev.stacker,
    locked: ev.locked.toString(),
    balance: ev.balance.toString(),
    burnchain_unlock_height: ev.burnchainUnlockHeight.toString(),
    pox_addr: poxAddrString(ev, mainnet),
    pox_addr_raw: ev.poxAddrRaw ?? (ev.poxAddrNone ? '0x' : null),
    name: ev.name,
    data: eventData(ev, pox4),
  };
}

export function poxEventsJson(rows: readonly PoxEventPlacement[]) {
  return rows.map(poxEventJson).filter((e) => e !== null);
}

/**
 * The members of a stacking pool (the reference's getPoxPoolDelegations) from the delegate-stx / revoke-delegate-stx
 * events naming candidates, newest first: the pool's own events only (`delegate_to` equal to it), still unlocked at
 * `burnHeight` (or with no unlock height), the newest per stacker, kept when that newest one is a delegate-stx.
 */
export function poolDelegations(rows: readonly PoxEventPlacement[], pool: string, burnHeight: number) {
  const seen = new Set<string>();
  const out: { stacker: string; pox_addr?: string; amount_ustx: string; burn_block_unlock_height?: number; block_height: number; tx_id: string }[] = [];
  for (const row of rows) {
    const ev = decodePoxPrintEvent(row.value_hex);
    if (!ev || (ev.name !== 'delegate-stx' && ev.name !== 'revoke-delegate-stx')) continue;
    if (ev.data.delegate_to !== pool) continue;
    const unlock = ev.name === 'delegate-stx' ? (ev.data.unlock_burn_height as bigint | null | undefined) ?? null : null;
    if (unlock !== null && !(unlock > BigInt(burnHeight))) continue;
    if (seen.has(ev.stacker)) continue;
    seen.add(ev.stacker);
    if (ev.name !== 'delegate-stx') continue;
    const poxAddr = poxAddrString(ev, row.contract_id.startsWith(BOOT_ADDRESS.mainnet + '.'));
    const m: (typeof out)[number] = {
      stacker: ev.stacker,
      amount_ustx: str(ev.data.amount_ustx) ?? '0',
      block_height: Number(row.block_height),
      tx_id: row.tx_id,
    };
    if (poxAddr) m.pox_addr = poxAddr;
    if (unlock !== null && unlock !== 0n) m.burn_block_unlock_height = Number(unlock);
    out.push(m);
  }
  return out;
}

// ---- /extended/v2/pox/cycles… ----------------------------------------------------------------------------------------


export function poxCycleJson(r: PoxCycleRow) {
  return {
    block_height: Number(r.block_height),
    index_block_hash: r.index_block_hash,
    cycle_number: Number(r.cycle_number),
    total_weight: Number(r.total_weight),
    total_stacked_amount: r.total_stacked_amount,
    total_signers: r.total_signers,
  };
}

/** `a / b * 100` as the reference computes it: a quotient rounded half-up to 20 decimals, times 100, as a double. */
export function stackedPercent(amount: bigint, total: bigint): number | null {
  if (total === 0n) return null;
  const q21 = (amount * 10n ** 21n) / total;
  const q20 = (q21 + 5n) / 10n; // half-up on the 21st decimal (amounts are non-negative)
  const digits = q20.toString().padStart(19, '0'); // q20 * 100 has 18 decimals
  return Number(`${digits.slice(0, -18)}.${digits.slice(-18)}`);
}

/** The Stacks address (single-sig p2pkh) of a compressed public key, on the chain's network. */
export function signerAddress(signingKeyHex: string, mainnet: boolean): string {
  const pub = Buffer.from(signingKeyHex.replace(/^0x/, ''), 'hex');
  const h160 = createHash('ripemd160').update(createHash('sha256').update(pub).digest()).digest();
  return codec.stacksAddressFromParts(mainnet ? 22 : 26, h160);
}

interface CycleStacker {
  stacker: string;
  signer_key: string | null;
  locked: bigint;
  pox_addr: string | null;
  name: string;
  amount_ustx: string | null;
  stacker_type: 'pooled' | 'solo';
}

/**
 * Who stacks in `cycle` and with which signer key (the reference's CTEs over pox4_events): pool operators' keys from
 * their newest stack-aggregation-commit[-indexed] for exactly that cycle; pooled stackers (newest delegate-stack-*
 * event whose cycle range covers the cycle) take their delegator's key; solo stackers (newest stack-stx / stack-extend
 * covering the cycle; the reference's filter misspells stack-increase, so it never counts) their own.
 */
export function cycleStackers(rows: readonly PoxEventPlacement[], cycle: number): CycleStacker[] {
  const c = BigInt(cycle);
  const decoded = rows.map((row) => ({ row, ev: decodePoxPrintEvent(row.value_hex) })).filter((x) => x.ev !== null) as {
    row: PoxEventPlacement;
    ev: PoxEvent;
  }[];
  const operatorKeys = new Map<string, string | null>();
  for (const { ev } of decoded) {
    if (ev.name !== 'stack-aggregation-commit' && ev.name !== 'stack-aggregation-commit-indexed') continue;
    if (ev.data.start_cycle_id !== c || ev.data.end_cycle_id !== c + 1n) continue;
    if (!operatorKeys.has(ev.stacker)) operatorKeys.set(ev.stacker, (ev.data.signer_key as string | null | undefined) ?? null);
  }
  const covers = (ev: PoxEvent) => {
    const s = ev.data.start_cycle_id as bigint | null | undefined;
    const e = ev.data.end_cycle_id as bigint | null | undefined;
    return s !== null && s !== undefined && e !== null && e !== undefined && s <= c && e > c;
  };
  const pooled = new Map<string, CycleStacker>();
  const solo = new Map<string, CycleStacker>();
  for (const { row, ev } of decoded) {
    const isPooled = ev.name === 'delegate-stack-stx' || ev.name === 'delegate-stack-increase' || ev.name === 'delegate-stack-extend';
    const isSolo = ev.name === 'stack-stx' || ev.name === 'stack-extend';
    if ((!isPooled && !isSolo) || !covers(ev)) continue;
    const target = isPooled ? pooled : solo;
    if (target.has(ev.stacker)) continue;
    const mainnet = row.contract_id.startsWith(BOOT_ADDRESS.mainnet + '.');
    target.set(ev.stacker, {
      stacker: ev.stacker,
      signer_key: isPooled
        ? (operatorKeys.get(ev.data.delegator as string) ?? null)
        : ((ev.data.signer_key as string | null | undefined) ?? null),
      locked: ev.locked,
      pox_addr: poxAddrString(ev, mainnet),
      name: ev.name,
      amount_ustx: str(ev.data.amount_ustx),
      stacker_type: isPooled ? 'pooled' : 'solo',
    });
  }
  return [...pooled.values(), ...solo.values()];
}

export function poxSignerJson(r: PoxSignerRow, stackers: readonly CycleStacker[], mainnet: boolean) {
  const tw = Number(r.total_weight);
  const mine = stackers.filter((s) => s.signer_key === r.signing_key);
  return {
    signing_key: r.signing_key,
    signer_address: signerAddress(r.signing_key, mainnet),
    weight: Number(r.weight),
    stacked_amount: r.stacked_amount,
    weight_percent: tw === 0 ? null : (Number(r.weight) / tw) * 100,
    stacked_amount_percent: stackedPercent(BigInt(r.stacked_amount), BigInt(r.total_stacked_amount)),
    pooled_stacker_count: new Set(mine.filter((s) => s.stacker_type === 'pooled').map((s) => s.stacker)).size,
    solo_stacker_count: new Set(mine.filter((s) => s.stacker_type === 'solo').map((s) => s.stacker)).size,
  };
}

/** The stackers of one signer key, by locked amount (descending) then address, as the reference lists them. */
export function signerStackersJson(stackers: readonly CycleStacker[], signingKey: string) {
  return stackers
    .filter((s) => s.signer_key === signingKey)
    .sort((a, b) => (a.locked === b.locked ? (a.stacker < b.stacker ? -1 : a.stacker > b.stacker ? 1 : 0) : a.locked > b.locked ? -1 : 1))
    .map((s) => ({
      stacker_address: s.stacker,
      stacked_amount:
        s.name === 'stack-aggregation-commit' || s.name === 'stack-aggregation-commit-indexed' ? (s.amount_ustx ?? '0') : s.locked.toString(),
      pox_address: s.pox_addr,
      stacker_type: s.stacker_type,
    }));
}
