/**
 * Evaluating hook predicates on a block, without scanning every hook: hooks are indexed by the key their scope names
 * (tx id, called contract, printing contract, asset, deployer), so a block costs one map look-up per tx or event key,
 * plus the few scopes that have no key (stx_event, block_height, deployments by trait or any deployer). Pure: no I/O.
 */
import { RE2JS } from 're2js';
import type { HookPredicate, IfThis } from './predicate.js';
import type { HookBlock, HookEvent, HookTx } from '../store/hooks.js';

export type { HookBlock, HookEvent, HookTx };

export interface IndexedHook {
  id: number;
  predicate: HookPredicate;
}

export const SIP09 = ['get-last-token-id', 'get-token-uri', 'get-owner', 'transfer'];
export const SIP10 = ['transfer', 'get-name', 'get-symbol', 'get-decimals', 'get-balance', 'get-total-supply', 'get-token-uri'];

function functionNames(abi: unknown): Set<string> {
  const fns = (abi as { functions?: { name?: string; access?: string }[] } | null)?.functions;
  return new Set((fns ?? []).filter((f) => f.access !== 'private').map((f) => String(f.name)));
}

export function implementsTrait(abi: unknown, trait: 'sip09' | 'sip10' | '*'): boolean {
  const names = functionNames(abi);
  const has = (list: string[]) => list.every((n) => names.has(n));
  if (trait === 'sip09') return has(SIP09);
  if (trait === 'sip10') return has(SIP10);
  return has(SIP09) || has(SIP10);
}

/** the printed value's Clarity repr (what `contains` and `matches_regex` look at) */
export function printRepr(e: HookEvent): string {
  const v = (e.api as { contract_log?: { value?: { repr?: string } } }).contract_log?.value?.repr;
  return typeof v === 'string' ? v : '';
}

const ACTION: Record<string, string> = { transfer: 'transfer', mint: 'mint', burn: 'burn' };

/** Does the predicate match this tx of this block? (The brute-force definition; the index only narrows who is asked.) */
export function txMatches(p: IfThis, tx: HookTx, block: HookBlock, regex?: RE2JS): boolean {
  switch (p.scope) {
    case 'txid':
      return tx.tx_id === p.equals.toLowerCase();
    case 'block_height': {
      const h = block.block_height;
      if (p.equals !== undefined) return h === p.equals;
      if (p.higher_than !== undefined) return h > p.higher_than;
      if (p.lower_than !== undefined) return h < p.lower_than;
      return h >= p.between![0] && h <= p.between![1];
    }
    case 'contract_call': {
      if (tx.tx_type !== 'contract_call' || tx.contract_call_contract_id !== p.contract_identifier) return false;
      const fn = (tx.api as { contract_call?: { function_name?: string } }).contract_call?.function_name;
      return fn === p.method;
    }
    case 'contract_deployment': {
      if (tx.tx_type !== 'smart_contract' || tx.status !== 'success') return false;
      if (p.deployer !== undefined) return p.deployer === '*' || tx.sender_address === p.deployer;
      return implementsTrait(tx.contract_abi, p.implement_trait!);
    }
    case 'print_event':
      return tx.events.some((e) => {
        if (e.event_type !== 'smart_contract_log') return false;
        if (p.contract_identifier !== '*' && e.contract_id !== p.contract_identifier) return false;
        if (p.contains !== undefined) return printRepr(e).includes(p.contains);
        if (p.matches_regex !== undefined) return (regex ?? RE2JS.compile(p.matches_regex)).matcher(printRepr(e)).find();
        return true;
      });
    case 'ft_event':
    case 'nft_event': {
      const type = p.scope === 'ft_event' ? 'fungible_token_asset' : 'non_fungible_token_asset';
      return tx.events.some(
        (e) => e.event_type === type && e.asset_identifier === p.asset_identifier && p.actions.includes(ACTION[e.asset_event_type ?? ''] as 'mint'),
      );
    }
    case 'stx_event':
      return tx.events.some(
        (e) =>
          (e.event_type === 'stx_asset' && p.actions.includes(ACTION[e.asset_event_type ?? ''] as 'mint')) ||
          (e.event_type === 'stx_lock' && p.actions.includes('lock')),
      );
  }
}

/** Is the block within the hook's start_block / end_block? */
export function inRange(p: HookPredicate, height: number): boolean {
  return (p.start_block === undefined || height >= p.start_block) && (p.end_block === undefined || height <= p.end_block);
}

/** Hooks indexed by the key of their scope. */
export class HookIndex {
  private readonly byTxid = new Map<string, IndexedHook[]>();
  private readonly byCall = new Map<string, IndexedHook[]>();
  private readonly byPrint = new Map<string, IndexedHook[]>();
  private readonly byAsset = new Map<string, IndexedHook[]>();
  private readonly byDeployer = new Map<string, IndexedHook[]>();
  /** scopes without a key: asked for every block */
  private readonly unkeyed: IndexedHook[] = [];
  private readonly regexes = new Map<number, RE2JS>();
  readonly size: number;

  constructor(hooks: Iterable<IndexedHook>) {
    let n = 0;
    const add = (m: Map<string, IndexedHook[]>, k: string, h: IndexedHook) => {
      const l = m.get(k);
      if (l) l.push(h);
      else m.set(k, [h]);
    };
    for (const h of hooks) {
      n++;
      const p = h.predicate.if_this;
      switch (p.scope) {
        case 'txid':
          add(this.byTxid, p.equals.toLowerCase(), h);
          break;
        case 'contract_call':
          add(this.byCall, p.contract_identifier, h);
          break;
        case 'print_event':
          add(this.byPrint, p.contract_identifier, h);
          if (p.matches_regex !== undefined) this.regexes.set(h.id, RE2JS.compile(p.matches_regex));
          break;
        case 'ft_event':
        case 'nft_event':
          add(this.byAsset, p.asset_identifier, h);
          break;
        case 'contract_deployment':
          if (p.deployer !== undefined && p.deployer !== '*') add(this.byDeployer, p.deployer, h);
          else this.unkeyed.push(h);
          break;
        default:
          this.unkeyed.push(h);
      }
    }
    this.size = n;
  }

  /** The hooks this block matches, each with the indexes (in `block.txs`) of its matching txs, in tx order. */
  match(block: HookBlock): Map<number, { hook: IndexedHook; txs: number[] }> {
    const out = new Map<number, { hook: IndexedHook; txs: number[] }>();
    if (this.size === 0) return out;
    const seen = new Set<number>();
    for (let i = 0; i < block.txs.length; i++) {
      const tx = block.txs[i];
      const candidates: IndexedHook[] = [];
      const take = (l: IndexedHook[] | undefined) => {
        if (l) for (const h of l) candidates.push(h);
      };
      take(this.byTxid.get(tx.tx_id));
      if (tx.contract_call_contract_id) take(this.byCall.get(tx.contract_call_contract_id));
      if (tx.tx_type === 'smart_contract') take(this.byDeployer.get(tx.sender_address));
      const contracts = new Set<string>();
      const assets = new Set<string>();
      let prints = false;
      for (const e of tx.events) {
        if (e.event_type === 'smart_contract_log' && e.contract_id) {
          contracts.add(e.contract_id);
          prints = true;
        } else if (e.asset_identifier) assets.add(e.asset_identifier);
      }
      for (const c of contracts) take(this.byPrint.get(c));
      if (prints) take(this.byPrint.get('*'));
      for (const a of assets) take(this.byAsset.get(a));
      for (const h of this.unkeyed) candidates.push(h);
      seen.clear();
      for (const h of candidates) {
        if (seen.has(h.id)) continue;
        seen.add(h.id);
        if (!inRange(h.predicate, block.block_height)) continue;
        if (!txMatches(h.predicate.if_this, tx, block, this.regexes.get(h.id))) continue;
        const m = out.get(h.id);
        if (m) m.txs.push(i);
        else out.set(h.id, { hook: h, txs: [i] });
      }
    }
    return out;
  }
}
