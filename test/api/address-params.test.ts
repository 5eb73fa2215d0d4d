// Principal parameters are checked for what they are: a malformed one, a mistyped one (c32 checksum) and one of the
// other network (on a database that knows nothing of it) are 400s in plain words naming the parameter; a wrong method
// on a known route is a 405 with Allow.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../helpers/service.js';
import { get } from '../helpers/http.js';

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService({}, { fixture: 'mocknet' }); // a testnet chain (a copy of its imported database)
}, 600_000);
afterAll(async () => {
  await svc?.stop();
});

const GOOD = 'ST000000000000000000002AMW42H'; // testnet boot address
const BAD_CHECKSUM = 'ST000000000000000000002AMW42J'; // its last character mistyped
const MAINNET_UNSEEN = 'SP3FBR2AGK5H9QBDH3EEN6DF8EK8JY7RX8QJ5SVTE'; // well-formed mainnet address

describe('principal parameters', () => {
  it('a good testnet address is answered', async () => {
    expect((await get(svc, `/extended/v1/address/${GOOD}/stx`)).status).toBe(200);
  });

  it.each([
    [`/extended/v1/address/${BAD_CHECKSUM}/balances`, 'params/principal'],
    [`/extended/v1/address/${BAD_CHECKSUM}.some-contract/balances`, 'params/principal'],
    [`/extended/v2/addresses/${BAD_CHECKSUM}/transactions`, 'params/principal'],
    [`/extended/v3/principals/${BAD_CHECKSUM}/transactions`, 'params/principal'],
    [`/extended/v1/tx/mempool?sender_address=${BAD_CHECKSUM}`, 'querystring/sender_address'],
    [`/extended/v1/tx/events?address=${BAD_CHECKSUM}`, 'querystring/address'],
    [`/extended/v1/tx?from_address=${BAD_CHECKSUM}`, 'from_address'],
  ])('%s → 400 naming %s and the checksum', async (path, label) => {
    const r = await get(svc, path);
    expect(r.status).toBe(400);
    expect(r.body.message).toContain(label);
    expect(r.body.message).toContain('checksum');
  });

  it.each([
    [`/extended/v1/address/${MAINNET_UNSEEN}/stx`, 'params/principal'],
    [`/extended/v1/address/${MAINNET_UNSEEN}/balances`, 'params/principal'],
    [`/extended/v3/principals/${MAINNET_UNSEEN}/nonces`, 'params/principal'],
    [`/extended/v1/tx/mempool?sender_address=${MAINNET_UNSEEN}`, 'querystring/sender_address'],
  ])('%s (mainnet on a testnet database) → 400 naming %s and the networks', async (path, label) => {
    const r = await get(svc, path);
    expect(r.status).toBe(400);
    expect(r.body.message).toContain(label);
    expect(r.body.message).toContain('mainnet');
    expect(r.body.message).toContain('testnet');
  });

  it('a malformed principal gets plain words, not a regular expression', async () => {
    for (const path of ['/extended/v1/address/notanaddress/balances', '/extended/v3/principals/nope/transactions', '/extended/v1/tx/mempool?address=nope']) {
      const r = await get(svc, path);
      expect(r.status, path).toBe(400);
      expect(r.body.message, path).toContain('must be a Stacks address');
      expect(r.body.message, path).not.toMatch(/pattern|\^|\{\d+,\d+\}|\[0-9/);
    }
  });
});

describe('wrong method on a known route', () => {
  it('405 with Allow on static and parameter routes; 404 for unknown paths', async () => {
    const post = await fetch(svc.api + '/extended/v1/tx', { method: 'POST', body: '{}' });
    expect(post.status).toBe(405);
    expect(post.headers.get('allow')).toBe('GET, HEAD');
    expect(await post.json()).toMatchObject({ statusCode: 405, error: 'Method Not Allowed', message: expect.stringContaining('POST') });
    const del = await fetch(`${svc.api}/extended/v1/address/${GOOD}/balances`, { method: 'DELETE' });
    expect([del.status, del.headers.get('allow')]).toEqual([405, 'GET, HEAD']);
    expect((await fetch(svc.api + '/extended/v1/nothing-here', { method: 'POST', body: '{}' })).status).toBe(404);
  });
});
