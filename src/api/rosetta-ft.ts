/**
 * Symbol and decimals of fungible tokens for Rosetta's FT operations, read from the node (the token contract's
 * read-only `get-symbol` and `get-decimals`, through the node pool) as the reference does when its FT metadata option is
 * on. Without a node nothing is known and FT events list no operations — the reference's default, and what its recorded
 * answers show. Answers are kept per contract (failures are retried on a later request).
 */
import { codec } from '../chain/native.js';
import { nodeCall } from '../proxy/rpc.js';
import type { NodePool } from '../proxy/pool.js';

export interface FtMeta {
  symbol: string;
  decimals: number;
}

const MAX_ENTRIES = 5000;
const cache = new Map<string, Promise<FtMeta | undefined>>();

type Cv = { type_id: number; value?: unknown; data?: string };

function unwrap(hex: string): Cv {
  let v = codec.decodeClarityValue(hex) as unknown as Cv;
  // (ok x) and (some x) around the value
  while (v.type_id === 7 || v.type_id === 10) v = v.value as Cv;
  return v;
}

async function readOnly(pool: NodePool, contractId: string, fn: string, sender: string): Promise<Cv> {
  const [address, name] = contractId.split('.');
  const r = await nodeCall(pool, 'POST', `/v2/contracts/call-read/${address}/${name}/${fn}`, {
    contentType: 'application/json',
    data: JSON.stringify({ sender, arguments: [] }),
  });
  const body = r.body as { okay?: boolean; result?: string } | null;
  if (r.status !== 200 || !body?.okay || typeof body.result !== 'string') throw new Error(`${contractId} ${fn}: not answered`);
  return unwrap(body.result);
}

async function resolve(pool: NodePool, contractId: string): Promise<FtMeta | undefined> {
  const sender = contractId.split('.')[0];
  const symbol = await readOnly(pool, contractId, 'get-symbol', sender);
  const decimals = await readOnly(pool, contractId, 'get-decimals', sender);
  // string-ascii (13) / string-utf8 (14); uint (1)
  if ((symbol.type_id !== 13 && symbol.type_id !== 14) || decimals.type_id !== 1) return undefined;
  return { symbol: String(symbol.data), decimals: Number(decimals.value) };
}

/** Whether token metadata can be asked for at all (a node pool with nodes). */
export function ftMetadataAvailable(pool: NodePool | undefined): pool is NodePool {
  return !!pool && pool.nodes.length > 0;
}

/** The metadata of each asset (`<contract>::<token>`), where the node answers; an empty map without a node. */
export async function ftMetadata(pool: NodePool | undefined, assetIdentifiers: string[]): Promise<Map<string, FtMeta>> {
  const out = new Map<string, FtMeta>();
  if (!ftMetadataAvailable(pool)) return out;
  await Promise.all(
    [...new Set(assetIdentifiers)].map(async (asset) => {
      const contractId = asset.split('::')[0];
      let p = cache.get(contractId);
      if (!p) {
        if (cache.size >= MAX_ENTRIES) cache.delete(cache.keys().next().value!);
        p = resolve(pool, contractId).catch(() => {
          cache.delete(contractId);
          return undefined;
        });
        cache.set(contractId, p);
      }
      const m = await p;
      if (m) out.set(asset, m);
    }),
  );
  return out;
}
