/** The generator's keys: accounts derived from the seed, and transaction signing. */
import { StacksTransactionWire, TransactionSigner, privateKeyToPublic, publicKeyToAddressSingleSig } from '@stacks/transactions';
import { hex0x, sha256 } from './determinism.js';
import type { Account } from './types.js';

/** The testnet account of a seed and a tag (`account-3`, `miner-a`): the same pair gives the same key. */
export function seededAccount(seed: string, tag: string): Account {
  const key = sha256('key', seed, tag) + '01';
  const pub = privateKeyToPublic(key) as string;
  return { key, pub, address: publicKeyToAddressSingleSig(pub, 'testnet') };
}

/** Signs the origin of a transaction: its wire hex and id (both 0x, lowercase). */
export function sign(tx: StacksTransactionWire, key: string): { rawTx: string; txId: string } {
  new TransactionSigner(tx).signOrigin(key);
  return { rawTx: hex0x(tx.serialize()), txId: hex0x(tx.txid()) };
}
