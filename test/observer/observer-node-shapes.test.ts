// Payload shapes other stacks-core versions send that the fixtures do not contain: they must validate (a 400 makes a
// real node retry the same message forever), while malformed input is still rejected.
import { describe, expect, it } from 'vitest';
import { validateObserverMessage } from '../../src/observer/schemas.js';
import { readFixture } from '../helpers/fixtures.js';

const blocks = readFixture('epoch-3-transition')
  .filter((l) => l.path === '/new_block')
  .map((l) => JSON.parse(l.body));
const withRewardSet = blocks.find((b) => b.reward_set?.signers && b.reward_set.rewarded_addresses.length > 0)!;
const nakamoto = readFixture('fuzzed-transactions-1')
  .filter((l) => l.path === '/new_block')
  .map((l) => JSON.parse(l.body))
  .find((b) => Array.isArray(b.signer_signature) && b.signer_signature.length > 0)!;

describe('/new_block shapes of other node versions', () => {
  it('reward_set with base58 rewarded_addresses and a null threshold (RewardSetEventPayload of newer nodes)', () => {
    const rs = { ...withRewardSet.reward_set, rewarded_addresses: ['mvtMXL2MYSU4Z4rVtvVozPSvEiG5QpeqGq', 'tb1pf4x64urhdsdmadxxhv2wwjv6e3evy59auu2xaauu3vz3adxtskfschm453'], pox_ustx_threshold: null };
    expect(validateObserverMessage('/new_block', { ...withRewardSet, reward_set: rs }).ok).toBe(true);
  });

  it('a malformed rewarded address object is still rejected with its path; a number is rejected', () => {
    const rs = structuredClone(withRewardSet.reward_set);
    rs.rewarded_addresses[0].Standard[0].bytes = 'not hex';
    const r = validateObserverMessage('/new_block', { ...withRewardSet, reward_set: rs });
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.message).toContain('body/reward_set/rewarded_addresses/0/Standard/0/bytes');
    const r2 = validateObserverMessage('/new_block', { ...withRewardSet, reward_set: { ...withRewardSet.reward_set, rewarded_addresses: [5] } });
    expect(r2.ok).toBe(false);
  });

  it('tenure_height null (reference type number | null) and 0x-prefixed signer signatures', () => {
    expect(validateObserverMessage('/new_block', { ...nakamoto, tenure_height: null }).ok).toBe(true);
    const sigs = nakamoto.signer_signature.map((s: string) => '0x' + s);
    expect(validateObserverMessage('/new_block', { ...nakamoto, signer_signature: sigs }).ok).toBe(true);
    expect(validateObserverMessage('/new_block', { ...nakamoto, signer_signature: ['0xzz'] }).ok).toBe(false);
  });
});
