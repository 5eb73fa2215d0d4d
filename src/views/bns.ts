// Pure BNS answer builders.
import type { BnsNameRow, BnsSubdomainRow } from '../store/bns.js';
import type { BnsV2NameRow } from '../store/bns-v2.js';

export const BNS_BLOCKCHAIN = 'stacks';

/** `/v1/names/{name}` of a name (the reference leaves out null fields: grace_period and resolver of on-chain names). */
export function nameInfo(row: BnsNameRow): Record<string, unknown> {
  return {
    address: row.address,
    blockchain: BNS_BLOCKCHAIN,
    expire_block: row.expire_block,
    last_txid: row.tx_id,
    status: row.status,
    zonefile: row.zonefile,
    zonefile_hash: row.zonefile_hash,
  };
}

/** `/v1/names/{name}` of a BNS-V2 name (no v1 name of that name): its owner, latest operation, renewal height. */
export function v2NameInfo(row: BnsV2NameRow): Record<string, unknown> {
  const out: Record<string, unknown> = {
    address: row.owner ?? '',
    blockchain: BNS_BLOCKCHAIN,
    last_txid: row.tx_id,
    status: row.op,
    zonefile_hash: '',
  };
  if (row.renewal_height !== null) out.expire_block = row.renewal_height;
  return out;
}

/** `/v1/names/{name}` of a subdomain. */
export function subdomainInfo(row: BnsSubdomainRow): Record<string, unknown> {
  return {
    address: row.owner,
    blockchain: BNS_BLOCKCHAIN,
    last_txid: row.tx_id,
    resolver: row.resolver,
    status: 'registered_subdomain',
    zonefile: row.zonefile,
    zonefile_hash: row.zonefile_hash,
  };
}

/** What getNamesByAddressList answers: valid names held, and the subdomains of valid names, sorted. */
export function ownedNames(
  owned: { subdomains: { name: string; fqn: string }[]; names: string[] },
  valid: ReadonlySet<string>,
): string[] {
  const out = new Set<string>();
  for (const s of owned.subdomains) if (valid.has(s.name)) out.add(s.fqn);
  for (const n of owned.names) if (valid.has(n)) out.add(n);
  return [...out].sort();
}
