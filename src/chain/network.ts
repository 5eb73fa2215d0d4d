/**
 * The network a database holds (STACKS_CHAIN_ID): mainnet txs carry version 0x00 and chain id 0x00000001, testnet
 * txs version 0x80 and chain id 0x80000000 (the first five bytes of a serialized transaction). The node's own boot
 * transactions (genesis block) carry chain id 0x00000000: they are neither checked nor used to adopt a network (the
 * node wrote them itself; which version byte a network's boot code gets is not something to bet a database on).
 */
import { CHAIN_ID_MAINNET, CHAIN_ID_TESTNET } from '../config.js';

export const hexChainId = (id: number): string => '0x' + id.toString(16).padStart(8, '0');
export const networkName = (id: number): string =>
  id === CHAIN_ID_MAINNET ? 'mainnet' : id === CHAIN_ID_TESTNET ? 'testnet' : 'unknown network';
export const describeId = (id: number) => `${hexChainId(id)} (${networkName(id)})`;

const VERSION_MAINNET = 0x00;
const VERSION_TESTNET = 0x80;

export interface TxNetwork {
  version: number;
  /** as serialized; 0 for boot transactions */
  chainId: number;
  /** the network the tx belongs to, or undefined when version and chain id disagree (and for boot transactions) */
  network: number | undefined;
  boot: boolean;
}

/** Version byte and chain id of a serialized transaction (hex, with or without 0x); undefined when too short. */
export function txNetwork(rawTx: string): TxNetwork | undefined {
  const h = rawTx.startsWith('0x') ? rawTx.slice(2) : rawTx;
  if (h.length < 10) return undefined; // e.g. burnchain operations reported as raw_tx 0x00
  const version = parseInt(h.slice(0, 2), 16);
  const chainId = parseInt(h.slice(2, 10), 16);
  const byVersion = version === VERSION_MAINNET ? CHAIN_ID_MAINNET : version === VERSION_TESTNET ? CHAIN_ID_TESTNET : undefined;
  const boot = chainId === 0;
  const network = !boot && chainId === byVersion ? byVersion : undefined;
  return { version, chainId, network, boot };
}

/**
 * undefined when every tx belongs to `expected` (or, with `expected` undefined, all to one network); otherwise the
 * reason, naming both chain ids.
 */
export function checkTxNetworks(
  txs: { tx_id: string; raw_tx: string }[],
  expected: number | undefined,
): { network: number | undefined; error?: string } {
  let net = expected;
  for (const t of txs) {
    const n = txNetwork(t.raw_tx);
    if (!n || n.boot) continue;
    if (n.network === undefined) {
      return {
        network: net,
        error: `transaction ${t.tx_id}: version 0x${n.version.toString(16).padStart(2, '0')} and chain id ${hexChainId(n.chainId)} belong to no Stacks network (mainnet: 0x00 / 0x00000001, testnet: 0x80 / 0x80000000)`,
      };
    }
    if (net === undefined) net = n.network;
    else if (n.network !== net) {
      const txId = n.chainId;
      return {
        network: net,
        error:
          `transaction ${t.tx_id} has chain id ${describeId(txId)}, but this database holds chain id ${describeId(net)}` +
          (expected === undefined ? ' (the other transactions of this message)' : ' (STACKS_CHAIN_ID, or the network of the first transaction stored)'),
      };
    }
  }
  return { network: net };
}
