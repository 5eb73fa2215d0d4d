// STACKS_CHAIN_ID means something: the database records its network (set, or adopted from the first transaction)
// and the observer refuses transactions of the other network with a 400 naming both chain ids.
import { afterEach, describe, expect, it } from 'vitest';
import { getAddressFromPublicKey, makeUnsignedSTXTokenTransfer } from '@stacks/transactions';
import { loadConfig } from '../../src/config.js';
import { createLogger } from '../../src/logger.js';
import { startService } from '../../src/service.js';
import { StartupError } from '../../src/startup-error.js';
import { checkTxNetworks, txNetwork } from '../../src/chain/network.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { readFixture } from '../helpers/fixtures.js';
import { replay, startTestService, type TestService } from '../helpers/service.js';
import { deliver } from '../helpers/http.js';

const PUB = '03ef788b3830c00abe8f64f62dc32fc863bc0b2cafeb073b6c8e1c7657d9c2c3ab';
const RECIPIENT = { mainnet: getAddressFromPublicKey(PUB, 'mainnet'), testnet: getAddressFromPublicKey(PUB, 'testnet') } as const;

async function mempoolTx(network: 'mainnet' | 'testnet', nonce = 0): Promise<string> {
  const tx = await makeUnsignedSTXTokenTransfer({ recipient: RECIPIENT[network], amount: 1, fee: 180, nonce, publicKey: PUB, network });
  return '0x' + tx.serialize().replace(/^0x/, '');
}

const cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (cleanup.length) await cleanup.pop()!();
});

async function service(env: Record<string, string> = {}): Promise<TestService> {
  const s = await startTestService(env);
  cleanup.push(() => s.stop());
  return s;
}

describe('transaction network (pure)', () => {
  it('reads version and chain id from the serialized tx', async () => {
    expect(txNetwork(await mempoolTx('mainnet'))).toEqual({ version: 0, chainId: 1, network: 1, boot: false });
    expect(txNetwork(await mempoolTx('testnet'))).toEqual({ version: 0x80, chainId: 0x80000000, network: 0x80000000, boot: false });
    expect(txNetwork('0x00')).toBeUndefined();
    // boot transactions (chain id 0) are neither checked nor adopted from
    expect(txNetwork('0x8000000000040000')).toMatchObject({ boot: true, network: undefined });
    expect(checkTxNetworks([{ tx_id: '0xboot', raw_tx: '0x0000000000040000' }], 0x80000000)).toEqual({ network: 0x80000000 });
    expect(checkTxNetworks([{ tx_id: '0xboot', raw_tx: '0x8000000000040000' }], undefined)).toEqual({ network: undefined });
    // version and chain id disagree
    expect(txNetwork('0x0080000000040000')?.network).toBeUndefined();
    const mixed = checkTxNetworks([{ tx_id: '0xa', raw_tx: await mempoolTx('testnet') }, { tx_id: '0xb', raw_tx: await mempoolTx('mainnet') }], undefined);
    expect(mixed.error).toMatch(/0xb has chain id 0x00000001 \(mainnet\), but this database holds chain id 0x80000000 \(testnet\)/);
  });
});

describe('STACKS_CHAIN_ID unset: the database adopts the first transaction’s network', () => {
  it('the newcomer path (mocknet, testnet) works, then a mainnet tx is a 400 naming both chain ids, nothing written but the dead letter', async () => {
    const svc = await service();
    const statuses = await replay(svc.observer, readFixture('mocknet'));
    expect(statuses.every((s) => s === 200)).toBe(true);
    expect(await svc.db.sql`SELECT chain_id, source FROM chain_network`).toEqual([{ chain_id: 0x80000000, source: expect.stringMatching(/^first transaction/) }]);

    const raw = await mempoolTx('mainnet');
    const [{ n: logBefore }] = await svc.db.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM event_log`;
    const r = await deliver(svc.observer, '/new_mempool_tx', [raw]);
    expect(r.status).toBe(400);
    expect(r.body.message).toContain('0x00000001 (mainnet)');
    expect(r.body.message).toContain('0x80000000 (testnet)');
    const [{ n: logAfter }] = await svc.db.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM event_log`;
    expect(logAfter).toBe(logBefore);
    expect(await svc.db.sql`SELECT 1 FROM mempool_txs WHERE raw_tx = ${raw}`).toHaveLength(0);
    const dead = await svc.db.sql<{ path: string; reason: string }[]>`SELECT path, reason FROM dead_letters`;
    expect(dead).toEqual([{ path: '/new_mempool_tx', reason: r.body.message }]);
    // a testnet mempool tx is still welcome
    expect((await deliver(svc.observer, '/new_mempool_tx', [await mempoolTx('testnet', 7)])).status).toBe(200);
  }, 300_000);

  it('a mainnet stream is adopted as mainnet; a testnet mempool tx is then refused', async () => {
    const svc = await service();
    expect((await replay(svc.observer, readFixture('mainnet-reorg-scenario2'))).every((s) => s === 200)).toBe(true);
    const r = await deliver(svc.observer, '/new_mempool_tx', [await mempoolTx('testnet')]);
    expect(r.status).toBe(400);
    expect(r.body.message).toMatch(/chain id 0x80000000 \(testnet\), but this database holds chain id 0x00000001 \(mainnet\)/);
  }, 300_000);

  it('the first mempool tx decides too', async () => {
    const svc = await service();
    expect((await deliver(svc.observer, '/new_mempool_tx', [await mempoolTx('mainnet')])).status).toBe(200);
    expect((await deliver(svc.observer, '/new_mempool_tx', [await mempoolTx('testnet')])).status).toBe(400);
  }, 300_000);
});

describe('STACKS_CHAIN_ID set', () => {
  it('is enforced from the start and recorded; a process configured for the other network refuses to start', async () => {
    const svc = await service({ STACKS_CHAIN_ID: 'mainnet' });
    expect(await svc.db.sql`SELECT chain_id FROM chain_network`).toEqual([{ chain_id: 1 }]);
    const r = await deliver(svc.observer, '/new_mempool_tx', [await mempoolTx('testnet')]);
    expect(r.status).toBe(400);
    expect(r.body.message).toContain('0x80000000 (testnet)');
    expect(r.body.message).toContain('0x00000001 (mainnet)');

    const config = loadConfig({ DATABASE_URL: svc.db.url, API_HOST: '127.0.0.1', API_PORT: '0', OBSERVER_PORT: '0', STACKS_CHAIN_ID: 'testnet' });
    const err = await startService(config, createLogger('silent')).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(StartupError);
    expect((err as Error).message).toMatch(/STACKS_CHAIN_ID=0x80000000 \(testnet\), but this database holds chain id 0x00000001 \(mainnet\)/);
  }, 300_000);

  it('a database that adopted testnet refuses STACKS_CHAIN_ID=mainnet', async () => {
    const db: TestDatabase = await createTestDatabase();
    cleanup.push(() => db.drop());
    await db.sql`INSERT INTO chain_network (chain_id, source) VALUES (${0x80000000}, 'test')`;
    const config = loadConfig({ DATABASE_URL: db.url, API_HOST: '127.0.0.1', API_PORT: '0', OBSERVER_PORT: '0', STACKS_CHAIN_ID: '0x00000001' });
    await expect(startService(config, createLogger('silent'))).rejects.toThrow(/this database holds chain id 0x80000000 \(testnet\)/);
  }, 300_000);
});
