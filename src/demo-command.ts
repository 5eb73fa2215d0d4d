/** `stacks-pulse demo`: the terminal side of src/demo.ts (options, progress lines, Ctrl-C, the closing summary). */
import { errorPrefix } from './cli.js';
import { runDemo } from './demo.js';
import { DEFAULT_OBSERVER_URL, ObserverRejected } from './observer-client.js';

export const DEMO_DEFAULT_BLOCKS = 30;
export const DEMO_DEFAULT_PACE_MS = 2000;

/** Runs the demo with the parsed (already validated) options; resolves with the exit code. */
export async function runDemoCommand(options: Record<string, string>): Promise<number> {
  const url = (options.url ?? DEFAULT_OBSERVER_URL).replace(/\/+$/, '');
  const blocks = options.blocks === undefined ? DEMO_DEFAULT_BLOCKS : Number(options.blocks);
  const paceMs = options.pace === undefined ? DEMO_DEFAULT_PACE_MS : Number(options.pace);
  const out = (line: string) => process.stdout.write(line + '\n');
  const abort = new AbortController();
  const onSignal = () => abort.abort();
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  out(`stacks-pulse demo: feeding a demo chain of ${blocks} blocks to the observer at ${url}` + (paceMs ? `, a block every ${(paceMs / 1000).toFixed(1)} s` : '') + ' (Ctrl-C stops)');
  try {
    const stats = await runDemo({ url, blocks, paceMs, write: out, signal: abort.signal });
    if (!stats.complete) {
      out(`stopped after ${stats.messages} messages (height ${stats.height}); run it again to continue: what was sent changes nothing`);
      return 130;
    }
    const api = `http://${new URL(url).hostname === '127.0.0.1' ? 'localhost' : new URL(url).hostname}:3999`;
    out('');
    out(`done: height ${stats.height}, ${stats.txs} transactions mined, ${stats.names.length} BNS names, ${stats.pending} transactions pending in the mempool`);
    out(`look at them (API on port 3999 by default, API_PORT):`);
    out(`  dashboard   ${api}/dashboard`);
    out(`  blocks      ${api}/extended/v2/blocks`);
    out(`  mempool     ${api}/extended/v1/tx/mempool`);
    if (stats.account) out(`  a balance   ${api}/extended/v1/address/${stats.account}/balances`);
    if (stats.names.length) out(`  a BNS name  ${api}/v1/names/${stats.names[0]}`);
    return 0;
  } catch (err) {
    if (!(err instanceof ObserverRejected)) throw err;
    process.stderr.write(`${errorPrefix('demo')}${err.message}\n`);
    return 1;
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}
