/**
 * The names a bns::names NFT key stands for, decoded in TypeScript (src/chain/bns.ts bnsNameOfKey, used by
 * `/v1/addresses/{blockchain}/{address}`), agree with the SQL decoder the other BNS reads use (sql/0050_bns.sql
 * bns_cv + bns_utf8) on well-formed keys and on every malformed kind: not a tuple, a part missing or not a buffer,
 * bytes that are not UTF-8, a NUL byte.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Cl, serializeCV, type ClarityValue } from '@stacks/transactions';
import { bnsNameOfKey } from '../../src/chain/bns.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase('sp_bnskeys');
});
afterAll(async () => {
  await db.drop();
});

const hex = (cv: ClarityValue) => {
  const s = serializeCV(cv) as unknown as string | Uint8Array;
  return '0x' + (typeof s === 'string' ? s : Buffer.from(s).toString('hex'));
};
const buf = (b: number[] | string) => Cl.buffer(typeof b === 'string' ? Buffer.from(b, 'utf8') : Uint8Array.from(b));

const keys: [string, ClarityValue][] = [
  ['a plain name', Cl.tuple({ name: buf('alice'), namespace: buf('btc') })],
  ['UTF-8 beyond ASCII', Cl.tuple({ name: buf('zoë-😀'), namespace: buf('id') })],
  ['an empty name', Cl.tuple({ name: buf(''), namespace: buf('btc') })],
  ['extra fields', Cl.tuple({ name: buf('bob'), namespace: buf('stx'), extra: Cl.uint(1) })],
  ['bytes that are not UTF-8', Cl.tuple({ name: buf([0xff, 0xfe]), namespace: buf('btc') })],
  ['a NUL byte', Cl.tuple({ name: buf([0x61, 0x00, 0x62]), namespace: buf('btc') })],
  ['an ascii string, not a buffer', Cl.tuple({ name: Cl.stringAscii('carol'), namespace: buf('btc') })],
  ['no namespace', Cl.tuple({ name: buf('dave') })],
  ['not a tuple', Cl.uint(7)],
];

describe('bnsNameOfKey = bns_cv + bns_utf8', () => {
  for (const [what, cv] of keys) {
    it(what, async () => {
      const key = hex(cv);
      const [row] = await db.sql<{ name: string | null }[]>`
        SELECT bns_utf8(v->>'name') || '.' || bns_utf8(v->>'namespace') AS name FROM (SELECT bns_cv(${key}) AS v) d`;
      expect(bnsNameOfKey(key)).toBe(row.name);
    });
  }

  it('names the well-formed keys and refuses the others', () => {
    expect(bnsNameOfKey(hex(keys[0][1]))).toBe('alice.btc');
    expect(bnsNameOfKey(hex(keys[1][1]))).toBe('zoë-😀.id');
    expect(keys.slice(4).map(([, cv]) => bnsNameOfKey(hex(cv)))).toEqual([null, null, null, null, null]);
    expect(bnsNameOfKey('0xzz')).toBeNull();
  });
});
