import { randomBytes } from 'node:crypto';
import { cv } from '../../src/chain/pox.js';

/** A pox print value `(ok (tuple (balance ..) (burnchain-unlock-height ..) (data ..) (locked ..) (name ..) (stacker ..)))`. */
export function poxPrint(
  name: string,
  stacker: string,
  data: Record<string, string>,
  o: { locked?: bigint; balance?: bigint; unlock?: bigint } = {},
): string {
  return (
    '0x07' +
    cv
      .tuple({
        balance: cv.uint(o.balance ?? 1000n),
        'burnchain-unlock-height': cv.uint(o.unlock ?? 0n),
        data: cv.tuple(data),
        locked: cv.uint(o.locked ?? 0n),
        name: cv.stringAscii(name),
        stacker: cv.principal(stacker),
      })
      .slice(2)
  );
}

/** The testnet pox-4 boot contract. */
export const POX4_TESTNET = 'ST000000000000000000002AMW42H.pox-4';

/** The Stacks sender of the burnchain ops poxOpBlock makes (as the node sends an op's sender). */
export const OP_SENDER = { address: 'ST1Z7V02CJRY3G5R2RDG7SFAZA8VGH0Y44NC2NAJN', address_hash_bytes: '0x7e7d804c963c381702c3607cbd5f52370883c425', address_version: 26 };

const hex32 = () => '0x' + randomBytes(32).toString('hex');

/**
 * The node's /new_block message for the block on `tip` (a /new_block body; `burnStep` burn blocks later, on a new
 * burn block hash when that is not 0): one burnchain stack-stx op tx per pox-4 print value, each with that print as
 * its one event, in order. Returns the message and its txids.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export function poxOpBlock(tip: Record<string, any>, prints: string[], burnStep = 0): { body: Record<string, any>; txids: string[] } {
  const txids = prints.map(() => hex32());
  const body = {
    ...tip,
    burn_block_height: tip.burn_block_height + burnStep,
    burn_block_hash: burnStep ? hex32() : tip.burn_block_hash,
    block_hash: hex32(),
    index_block_hash: hex32(),
    parent_block_hash: tip.block_hash,
    parent_index_block_hash: tip.index_block_hash,
    block_height: tip.block_height + 1,
    matured_miner_rewards: [],
    reward_set: null,
    cycle_number: null,
    transactions: txids.map((txid, i) => ({
      txid,
      tx_index: i,
      status: 'success',
      raw_result: '0x0703',
      raw_tx: '0x00',
      contract_abi: null,
      burnchain_op: {
        stack_stx: {
          auth_id: 1, burn_block_height: tip.burn_block_height, burn_header_hash: 'aa'.repeat(32), burn_txid: txid.slice(2),
          max_amount: 1000, num_cycles: 1, reward_addr: 'tb1pf4x64urhdsdmadxxhv2wwjv6e3evy59auu2xaauu3vz3adxtskfschm453',
          sender: OP_SENDER, signer_key: '03' + '11'.repeat(32), stacked_ustx: 1000, vtxindex: 1 + i,
        },
      },
      execution_cost: { read_count: 1, read_length: 2, runtime: 3, write_count: 4, write_length: 5 },
      microblock_sequence: null,
      microblock_hash: null,
      microblock_parent_hash: null,
    })),
    events: txids.map((txid, i) => ({
      txid, event_index: i, committed: true, type: 'contract_event',
      contract_event: { contract_identifier: POX4_TESTNET, topic: 'print', value: null, raw_value: prints[i] },
    })),
  };
  return { body, txids };
}
