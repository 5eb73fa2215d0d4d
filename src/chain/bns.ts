// BNS v1 attachments (`/attachments/new`): the zonefile rows and the subdomain rows of a name-update zonefile, as the
// reference derives them (handleNewAttachmentMessage, updateAttachments, parseZoneFileTxt, parseResolver at v8.13.6).
// Names and namespaces are derived in SQL from the print events (sql/0050_bns.sql).
import { createHash } from 'node:crypto';
import { parseZoneFile, type ZoneFileUri } from 'zone-file';
import { codec } from './native.js';

export const BNS_CONTRACTS = ['SP000000000000000000002Q6VF78.bns', 'ST000000000000000000002AMW42H.bns'] as const;

export interface BnsZonefileRow {
  name: string;
  zonefile_hash: string;
  zonefile: string;
  op: string;
  tx_id: string;
  index_block_hash: string;
  block_height: number | null;
  attachment_index: number | null;
}

export interface BnsSubdomainRow {
  fully_qualified_subdomain: string;
  name: string;
  namespace_id: string;
  owner: string;
  zonefile_hash: string;
  zonefile: string;
  parent_zonefile_hash: string;
  parent_zonefile_index: number;
  zonefile_offset: number;
  resolver: string;
  tx_id: string;
  index_block_hash: string;
  block_height: number | null;
}

const strip0x = (h: string) => (h.startsWith('0x') || h.startsWith('0X') ? h.slice(2) : h);

function toInt(v: unknown): number | null {
  if (typeof v === 'number' && Number.isSafeInteger(v)) return v;
  if (typeof v === 'string' && /^\d{1,15}$/.test(v)) return Number(v);
  return null;
}

interface DecodedTuple {
  type_id: number;
  data?: Record<string, { type_id: number; buffer?: string; data?: string }>;
}

/** A serialized Clarity value, decoded (undefined when it does not decode). */
function decodeCv(hex: string): DecodedTuple | undefined {
  try {
    return codec.decodeClarityValue(hex.startsWith('0x') ? hex : '0x' + hex) as unknown as DecodedTuple;
  } catch {
    return undefined;
  }
}

/** name, namespace and op of an attachment's metadata (a Clarity tuple), or null. */
function attachmentMetadata(hex: string): { name: string; namespace: string; op: string } | null {
  const cv = decodeCv(hex);
  if (!cv) return null;
  const d = cv.data;
  const name = d?.name?.buffer;
  const namespace = d?.namespace?.buffer;
  const op = d?.op?.data;
  if (typeof name !== 'string' || typeof namespace !== 'string' || typeof op !== 'string') return null;
  return {
    name: Buffer.from(strip0x(name), 'hex').toString('utf8'),
    namespace: Buffer.from(strip0x(namespace), 'hex').toString('utf8'),
    op,
  };
}

const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

/** A buffer's bytes as UTF-8 text; null when they are not UTF-8 or hold a NUL (which PostgreSQL text cannot). */
function utf8OrNull(hex: string): string | null {
  try {
    const s = strictUtf8.decode(Buffer.from(strip0x(hex), 'hex'));
    return s.includes('\0') ? null : s;
  } catch {
    return null;
  }
}

/**
 * The name a bns::names NFT key stands for (a tuple of `name` and `namespace` buffers): "name.namespace", or null
 * when the key is not such a tuple or a part is not UTF-8 text.
 */
export function bnsNameOfKey(hex: string): string | null {
  const cv = decodeCv(hex);
  const tuple = cv?.type_id === 12 ? cv.data : undefined;
  const name = tuple?.name?.buffer;
  const namespace = tuple?.namespace?.buffer;
  if (typeof name !== 'string' || typeof namespace !== 'string') return null;
  const n = utf8OrNull(name);
  const ns = utf8OrNull(namespace);
  return n === null || ns === null ? null : `${n}.${ns}`;
}

/** The zonefile rows of an `/attachments/new` body: attachments of the BNS contract whose metadata decodes. */
export function bnsZonefileRows(body: unknown): BnsZonefileRow[] {
  if (!Array.isArray(body)) return [];
  const out: BnsZonefileRow[] = [];
  for (const a of body as Record<string, unknown>[]) {
    if (!a || typeof a !== 'object') continue;
    if (!BNS_CONTRACTS.includes(a.contract_id as (typeof BNS_CONTRACTS)[number])) continue;
    const { metadata, content, content_hash, tx_id, index_block_hash } = a;
    if (typeof metadata !== 'string' || typeof content_hash !== 'string' || typeof tx_id !== 'string') continue;
    if (typeof index_block_hash !== 'string') continue;
    const md = attachmentMetadata(metadata);
    if (!md) continue;
    out.push({
      name: `${md.name}.${md.namespace}`,
      zonefile_hash: strip0x(content_hash),
      zonefile: Buffer.from(strip0x(typeof content === 'string' ? content : ''), 'hex').toString('utf8'),
      op: md.op,
      tx_id,
      index_block_hash,
      block_height: toInt(a.block_height),
      attachment_index: toInt(a.attachment_index),
    });
  }
  return out;
}

/** The resolver of a zonefile: the target of the last URI record whose name contains "resolver", else ''. */
export function zonefileResolver(uri: readonly ZoneFileUri[] | undefined): string {
  let resolver = '';
  for (const u of uri ?? []) if (u.name?.includes('resolver')) resolver = u.target;
  return resolver;
}

/**
 * A subdomain TXT record (`owner=…`, `seqn=…`, `parts=…`, `zf0=…`…): as the reference, each entry is cut at its '='
 * signs and only the second piece kept (so base64 padding is dropped), the `zf*` pieces are joined and base64-decoded;
 * the subdomain's zonefile hash is the last 16 bytes of the sha256 of that zonefile.
 */
export function parseSubdomainTxt(entries: string | string[]): { owner: string; zonefile: string; zonefileHash: string } {
  const txt = Array.isArray(entries) ? entries : [entries];
  let owner = '';
  let zf = '';
  for (const entry of txt) {
    const [key, value] = entry.split('=');
    if (key === 'owner') owner = value ?? '';
    else if (key.startsWith('zf')) zf += value ?? '';
  }
  const bytes = Buffer.from(zf, 'base64');
  return {
    owner,
    zonefile: bytes.toString('ascii'),
    zonefileHash: createHash('sha256').update(bytes).digest().subarray(16).toString('hex'),
  };
}

/** The subdomain rows of a name-update zonefile (none for another op, or a zonefile that does not parse). */
export function bnsSubdomainRows(z: BnsZonefileRow): BnsSubdomainRow[] {
  if (z.op !== 'name-update') return [];
  let parsed;
  try {
    parsed = parseZoneFile(z.zonefile);
  } catch {
    return [];
  }
  const dot = z.name.indexOf('.');
  const namespace = z.name.slice(dot + 1);
  const resolver = zonefileResolver(parsed.uri);
  const out: BnsSubdomainRow[] = [];
  for (const record of parsed.txt ?? []) {
    const t = parseSubdomainTxt(record.txt);
    if (t.owner === '') continue;
    out.push({
      fully_qualified_subdomain: `${record.name}.${z.name}`,
      name: z.name,
      namespace_id: namespace,
      owner: t.owner,
      zonefile_hash: t.zonefileHash,
      zonefile: t.zonefile,
      parent_zonefile_hash: z.zonefile_hash,
      parent_zonefile_index: 0,
      zonefile_offset: 1,
      resolver,
      tx_id: z.tx_id,
      index_block_hash: z.index_block_hash,
      block_height: z.block_height,
    });
  }
  return out;
}

/** The BNS boot contract of a network. */
export function bnsContract(network: 'mainnet' | 'testnet'): string {
  return network === 'testnet' ? BNS_CONTRACTS[1] : BNS_CONTRACTS[0];
}

/** A Clarity buffer holding a string's UTF-8 bytes, serialized (0x-hex), as the read-only call arguments. */
export function bufferCvHex(s: string): string {
  const bytes = Buffer.from(s, 'utf8');
  return '0x02' + bytes.length.toString(16).padStart(8, '0') + bytes.toString('hex');
}

/** The amount of a `(ok uint)` result (0x-hex), as a decimal string; null for any other value. */
export function okUintAmount(hex: string | undefined): string | null {
  const m = /^(?:0x)?0701([0-9a-fA-F]{32})$/.exec(hex ?? '');
  return m ? BigInt('0x' + m[1]).toString(10) : null;
}
