// The BNS genesis import (Stacks 1.0 names, namespaces and subdomains), as the reference's BNS_IMPORT_DIR import
// (src/import-v1 at v8.13.6): chainstate.txt (NAMESPACES and NAMES sections) with name_zonefiles.txt, then, when
// present, subdomains.csv with subdomain_zonefiles.txt (in the same order). Each file is checked against its
// `.sha256` file. Rows are placed in the canonical genesis block (height 1) and its first tx; namespaces are ready at
// 1, names registered at 1 and expire at 1 + the namespace's lifetime; subdomain owners given as Bitcoin addresses
// become Stacks addresses. Each part is imported once (bns_imports).
import { createHash } from 'node:crypto';
import { createReadStream, existsSync, readFileSync, statSync } from 'node:fs';
import { createInterface } from 'node:readline';
import path from 'node:path';
import type { Sql } from './sql.js';
import { codec } from '../chain/native.js';

const BATCH = 5000;
const I32_MAX = 2147483647;

export interface BnsImportResult {
  namespaces: number;
  names: number;
  subdomains: number;
  /** parts skipped because they were imported before */
  skipped: string[];
}

async function sha256File(file: string): Promise<string> {
  const h = createHash('sha256');
  for await (const chunk of createReadStream(file)) h.update(chunk as Buffer);
  return h.digest('hex');
}

async function checkFile(dir: string, name: string): Promise<string> {
  const file = path.join(dir, name);
  if (!existsSync(file)) throw new Error(`${file} not found`);
  const shaFile = `${file}.sha256`;
  if (!existsSync(shaFile)) throw new Error(`${shaFile} not found`);
  const expected = readFileSync(shaFile, 'utf8').trim().split(/\s+/)[0].toLowerCase();
  const actual = await sha256File(file);
  if (actual !== expected) throw new Error(`${file}: sha256 ${actual} does not match ${shaFile} (${expected})`);
  return file;
}

/** `hash\ncontent\nhash\ncontent…` with `\n` escaped in the content. */
function readZonefiles(file: string): Map<string, string> {
  const lines = readFileSync(file, 'utf8').split('\n');
  const out = new Map<string, string>();
  for (let i = 0; i + 1 < lines.length; i += 2) {
    if (lines[i] === '') break;
    out.set(lines[i], lines[i + 1].replace(/\\n/g, '\n'));
  }
  return out;
}

function stacksAddress(owner: string): string {
  if (owner.startsWith('S')) return owner;
  try {
    return codec.bitcoinToStacksAddress(owner);
  } catch {
    return owner;
  }
}

async function insertJson(tx: Sql, table: 'bns_namespaces' | 'bns_names' | 'bns_zonefiles' | 'bns_subdomains', rows: object[]) {
  for (let i = 0; i < rows.length; i += BATCH) {
    const chunk = JSON.stringify(rows.slice(i, i + BATCH));
    await tx.unsafe(`INSERT INTO ${table} SELECT * FROM json_populate_recordset(NULL::${table}, $1::text::json) ON CONFLICT DO NOTHING`, [chunk]);
  }
}

/** Progress of a part: rows written so far, and the share of its main file read (0..1). */
export type BnsImportProgress = (part: 'names' | 'subdomains', rows: number, fraction: number) => void;

export async function importBns(sql: Sql, dir: string, onProgress?: BnsImportProgress): Promise<BnsImportResult> {
  const result: BnsImportResult = { namespaces: 0, names: 0, subdomains: 0, skipped: [] };
  const [genesis] = await sql<{ index_block_hash: string; tx_id: string; tx_index: number }[]>`
    SELECT t.index_block_hash, t.tx_id, t.tx_index FROM blocks b JOIN txs t USING (index_block_hash)
    WHERE b.canonical AND b.block_height = 1 ORDER BY t.tx_index LIMIT 1`;
  if (!genesis) throw new Error('the genesis block (height 1) is not ingested yet: import the BNS files after it');
  const done = new Set((await sql<{ part: string }[]>`SELECT part FROM bns_imports`).map((r) => r.part));
  const place = { tx_id: genesis.tx_id, tx_index: genesis.tx_index, index_block_hash: genesis.index_block_hash };

  if (done.has('names')) result.skipped.push('names');
  else {
    const chainstate = await checkFile(dir, 'chainstate.txt');
    const zonefiles = readZonefiles(await checkFile(dir, 'name_zonefiles.txt'));
    const namespaces: Record<string, unknown>[] = [];
    const lifetimes = new Map<string, number>();
    const names: Record<string, unknown>[] = [];
    const nameZonefiles: Record<string, unknown>[] = [];
    let section = '';
    for (const line of readFileSync(chainstate, 'utf8').split('\n')) {
      if (line.startsWith('-----BEGIN')) {
        section = line.replace(/^-+BEGIN\s+/, '').replace(/-+$/, '').trim().toLowerCase();
        continue;
      }
      if (line.startsWith('-----END')) {
        section = '';
        continue;
      }
      const parts = line.trim().split(',');
      if (section === 'namespaces' && parts[0] !== 'namespace_id' && parts.length >= 8) {
        const [namespace_id, address, buckets, base, coeff, nonalpha, novowel, lifetime] = parts;
        lifetimes.set(namespace_id, Number(lifetime));
        namespaces.push({
          namespace_id, address, launched_at: null, reveal_block: 1, ready_block: 1, buckets, base, coeff,
          nonalpha_discount: nonalpha, no_vowel_discount: novowel, lifetime: Number(lifetime), status: null,
          event_index: 0, microblock_sequence: I32_MAX, ...place,
        });
      } else if (section === 'names' && parts[0] !== 'name' && parts.length >= 3) {
        const [name, address, zonefile_hash] = parts;
        const namespace = name.split('.').slice(1).join('');
        const lifetime = lifetimes.get(namespace);
        if (lifetime === undefined) throw new Error(`chainstate.txt: name ${name} of a missing namespace "${namespace}"`);
        names.push({
          name, namespace_id: namespace, address, registered_at: 1, expire_block: 1 + lifetime, zonefile_hash,
          status: 'name-register', event_index: null, microblock_sequence: I32_MAX, ...place,
        });
        nameZonefiles.push({
          name, zonefile_hash, zonefile: zonefiles.get(zonefile_hash) ?? '', op: 'name-import', block_height: 1,
          attachment_index: null, ...place,
        });
      }
    }
    await sql.begin(async (t) => {
      const tx = t as unknown as Sql;
      await insertJson(tx, 'bns_namespaces', namespaces);
      await insertJson(tx, 'bns_names', names);
      await insertJson(tx, 'bns_zonefiles', nameZonefiles);
      await tx`INSERT INTO bns_imports (part, rows) VALUES ('names', ${names.length})`;
    });
    onProgress?.('names', names.length, 1);
    result.namespaces = namespaces.length;
    result.names = names.length;
  }

  const csvPath = path.join(dir, 'subdomains.csv');
  if (done.has('subdomains')) result.skipped.push('subdomains');
  else if (existsSync(csvPath)) {
    const csv = await checkFile(dir, 'subdomains.csv');
    const zf = await checkFile(dir, 'subdomain_zonefiles.txt');
    const metaLines = createInterface({ input: createReadStream(csv), crlfDelay: Infinity })[Symbol.asyncIterator]();
    const zfLines = createInterface({ input: createReadStream(zf), crlfDelay: Infinity })[Symbol.asyncIterator]();
    const nextZonefile = async (): Promise<{ hash: string; content: string } | undefined> => {
      const h = await zfLines.next();
      const c = await zfLines.next();
      if (h.done || c.done || h.value === '') return undefined;
      return { hash: h.value, content: c.value.replace(/\\n/g, '\n') };
    };
    let count = 0;
    let bytes = 0;
    const size = Math.max(1, statSync(csv).size);
    await sql.begin(async (t) => {
      const tx = t as unknown as Sql;
      let rows: Record<string, unknown>[] = [];
      let zrows: Record<string, unknown>[] = [];
      const flush = async () => {
        await insertJson(tx, 'bns_subdomains', rows);
        await insertJson(tx, 'bns_zonefiles', zrows);
        rows = [];
        zrows = [];
      };
      for (;;) {
        const m = await metaLines.next();
        if (m.done || m.value === '') break;
        bytes += Buffer.byteLength(m.value) + 1;
        const parts = m.value.split(',');
        if (parts[0] === 'zonefile_hash') continue;
        const z = await nextZonefile();
        if (!z || z.hash !== parts[0]) throw new Error(`subdomain_zonefiles.txt is not in the order of subdomains.csv at ${parts[2]}`);
        const fqn = parts[2];
        const labels = fqn.split('.');
        rows.push({
          fully_qualified_subdomain: fqn, name: labels.slice(1).join('.'), namespace_id: labels[labels.length - 1],
          owner: stacksAddress(parts[3]), zonefile_hash: parts[0], zonefile: z.content, parent_zonefile_hash: parts[1],
          parent_zonefile_index: Number(parts[5]), zonefile_offset: Number(parts[6]), resolver: parts[7] ?? '',
          block_height: 1, ...place,
        });
        zrows.push({ name: fqn, zonefile_hash: parts[0], zonefile: z.content, op: 'name-import', block_height: 1, attachment_index: null, ...place });
        count++;
        if (rows.length >= BATCH) {
          await flush();
          onProgress?.('subdomains', count, bytes / size);
        }
      }
      await flush();
      await tx`INSERT INTO bns_imports (part, rows) VALUES ('subdomains', ${count})`;
    });
    onProgress?.('subdomains', count, 1);
    result.subdomains = count;
  }
  return result;
}
