// PoX synthetic events (pox-2/3/4 print events) → /extended/v1/address/{p}/stx lock fields, and burnchain-op txs end
// to end: the regtest pox-4 fixture is replayed, then blocks the node could send next are posted.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFixture } from '../helpers/fixtures.js';
import { startTestService, type TestService } from '../helpers/service.js';
import { deliverOk, getOk } from '../helpers/http.js';
import { decodePoxPrintEvent, poxEventRows, cv } from '../../src/chain/pox.js';
import { OP_SENDER, POX4_TESTNET, poxOpBlock, poxPrint } from '../helpers/pox-print.js';

const SCENARIO = 'regtest-env-pox-4-stack-stx-in-reward-phase-S1';
const STACKER = 'STB44HYPYAT2BB2QE513NSP81HTMYWBJP02HPGK6';
const LOCK_TX = '0x23c5b683d41592eb6fe48c7d0de590521b6de18f81242c8f20b9e9e94a240f1e';
const LOCKED = 2500170000000000n;

const lines = readFixture(SCENARIO);

describe('decodePoxPrintEvent on the fixture', () => {
  it('decodes the regtest stack-stx print with the reference’s patches (locked = lock-amount, unlock = unlock-burn-height)', () => {
    const prints = lines
      .filter((l) => l.path === '/new_block')
      .flatMap((l) => JSON.parse(l.body).events)
      .filter((e: any) => e.type === 'contract_event' && e.contract_event.contract_identifier === POX4_TESTNET && e.contract_event.topic === 'print');
    expect(prints.length).toBeGreaterThan(0);
    const d = decodePoxPrintEvent(prints[0].contract_event.raw_value)!;
    expect(d).toMatchObject({ name: 'stack-stx', stacker: STACKER, locked: LOCKED, burnchainUnlockHeight: 140n });
    expect(d.data.lock_period).toBe(1n);
    expect(d.poxAddrRaw).toMatch(/^0x0[0-6][0-9a-f]{40,64}$/);
  });

  it('handle-unlock adds locked back to balance; stack-increase adds to locked; non-pox and (err) prints are ignored', () => {
    const unlock = decodePoxPrintEvent(
      poxPrint('handle-unlock', STACKER, { 'first-cycle-locked': cv.uint(1n), 'first-unlocked-cycle': cv.uint(2n) }, { locked: 50n, balance: 10n, unlock: 99n }),
    )!;
    expect(unlock).toMatchObject({ name: 'handle-unlock', balance: 60n, locked: 50n, burnchainUnlockHeight: 99n });
    const inc = decodePoxPrintEvent(poxPrint('stack-increase', STACKER, { 'increase-by': cv.uint(7n), 'total-locked': cv.uint(57n) }, { locked: 50n, balance: 10n }))!;
    expect(inc).toMatchObject({ locked: 57n, balance: 3n });
    expect(decodePoxPrintEvent('0x08' + cv.uint(1n).slice(2))).toBeNull(); // (err u1)
    expect(decodePoxPrintEvent(poxPrint('no-such-event', STACKER, {}))).toBeNull();
    const rows = poxEventRows([
      { event_type: 'smart_contract_log', topic: 'print', contract_id: POX4_TESTNET, value_hex: poxPrint('stack-increase', STACKER, { 'increase-by': cv.uint(7n), 'total-locked': cv.uint(57n) }) },
      { event_type: 'smart_contract_log', topic: 'print', contract_id: 'ST000000000000000000002AMW42H.not-pox', value_hex: poxPrint('stack-increase', STACKER, { 'increase-by': cv.uint(7n), 'total-locked': cv.uint(57n) }) },
      { event_type: 'smart_contract_log', topic: 'print', contract_id: 'ST000000000000000000002AMW42H.pox', value_hex: poxPrint('stack-increase', STACKER, { 'increase-by': cv.uint(7n), 'total-locked': cv.uint(57n) }) },
    ]);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ name: 'stack-increase', stacker: STACKER, locked: '7' });
  });
});

describe('lock state and burnchain-op txs through the service', () => {
  let svc: TestService;
  let tip: any;
  beforeAll(async () => {
    // the stream delivered, every message accepted: a copy of its imported database (test/helpers/fixture-db.ts)
    svc = await startTestService({}, { fixture: SCENARIO });
    tip = JSON.parse(lines.filter((l) => l.path === '/new_block').at(-1)!.body);
  }, 300_000);
  afterAll(async () => svc?.stop());

  const stx = () => getOk<Record<string, unknown>>(svc, `/extended/v1/address/${STACKER}/stx`);

  const stxV2 = () => getOk<Record<string, unknown>>(svc, `/extended/v2/addresses/${STACKER}/balances/stx`);

  /** Posts the next block (`burnStep` burn blocks later): one burnchain stack-stx op tx carrying the given pox-4 print value. */
  async function nextBlock(print: string, burnStep = 0): Promise<string> {
    const { body, txids } = poxOpBlock(tip, [print], burnStep);
    await deliverOk(svc, '/new_block', body);
    tip = body;
    return txids[0];
  }

  it('the fixture lock comes from the pox-4 stack-stx event (stx_lock events are past pox_v1_unlock_height here)', async () => {
    expect(await stx()).toMatchObject({ lock_tx_id: LOCK_TX, locked: LOCKED.toString(), lock_height: 8, burnchain_lock_height: 110, burnchain_unlock_height: 140 });
    // the v2 route reads the same pox-4 lock (the lock's block is the tip here)
    expect(await stxV2()).toMatchObject({ lock_tx_id: LOCK_TX, locked: LOCKED.toString(), lock_height: 8, burnchain_lock_height: 110, burnchain_unlock_height: 140 });
  });

  it('a burnchain stack-stx op is served as a fee-less contract_call to pox-4', async () => {
    const print = poxPrint('stack-increase', STACKER, { 'increase-by': cv.uint(1000n), 'total-locked': cv.uint(LOCKED + 1000n) }, { locked: LOCKED, balance: 5000n, unlock: 140n });
    const txid = await nextBlock(print);
    const tx = await getOk(svc, `/extended/v1/tx/${txid}`);
    expect(tx).toMatchObject({
      tx_id: txid, tx_type: 'contract_call', fee_rate: '0', nonce: 0, sponsored: false, anchor_mode: 'any',
      post_condition_mode: 'allow', post_conditions: [], sender_address: OP_SENDER.address, tx_status: 'success', event_count: 1,
    });
    expect(tx.contract_call.contract_id).toBe(POX4_TESTNET);
    expect(tx.contract_call.function_name).toBe('stack-stx');
    expect(tx.contract_call.function_args).toHaveLength(8);
    expect(tx.contract_call.function_args[0].repr).toBe('u1000');

    // stack-increase (unlock 140 >= burn height 110) is now the lock: locked + increase-by, at the new height
    expect(await stx()).toMatchObject({
      lock_tx_id: txid, locked: (LOCKED + 1000n).toString(), lock_height: tip.block_height, burnchain_lock_height: tip.burn_block_height, burnchain_unlock_height: 140,
    });
    // until_block before the increase still sees the original lock
    const before = await getOk(svc, `/extended/v1/address/${STACKER}/stx?until_block=8`);
    expect(before).toMatchObject({ lock_tx_id: LOCK_TX, locked: LOCKED.toString() });
  });

  it('v2 balances/stx: burnchain_lock_height is the burn height of the tip block, not of the locking block (as the reference)', async () => {
    const lockBlock = tip;
    const lock = await stx();
    // a later block, two burn blocks later, whose print locks another stacker
    const other = 'ST2ZRX0K27GW0SP3GJCEMHD95TQGJMKB7G9Y0X1MH';
    await nextBlock(poxPrint('stack-increase', other, { 'increase-by': cv.uint(5n), 'total-locked': cv.uint(10n) }, { locked: 10n, balance: 5n, unlock: 140n }), 2);
    expect(tip.burn_block_height).toBe(lockBlock.burn_block_height + 2);
    expect(await stx()).toMatchObject({ lock_tx_id: lock.lock_tx_id, burnchain_lock_height: lockBlock.burn_block_height });
    expect(await stxV2()).toMatchObject({ lock_tx_id: lock.lock_tx_id, locked: lock.locked, lock_height: lock.lock_height, burnchain_lock_height: tip.burn_block_height });
  });

  it('a handle-unlock whose unlock height has passed resets the lock', async () => {
    const print = poxPrint('handle-unlock', STACKER, { 'first-cycle-locked': cv.uint(5n), 'first-unlocked-cycle': cv.uint(6n) }, { locked: LOCKED, balance: 5000n, unlock: 100n });
    await nextBlock(print);
    expect(await stx()).toMatchObject({ lock_tx_id: '', locked: '0', lock_height: 0, burnchain_lock_height: 0, burnchain_unlock_height: 0 });
    expect(await stxV2()).toMatchObject({ lock_tx_id: '', locked: '0', lock_height: 0, burnchain_lock_height: 0, burnchain_unlock_height: 0 });
  });
});
