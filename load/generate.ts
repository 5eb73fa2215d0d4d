/**
 * The chain generator's command line (the generator itself: load/generator/):
 *
 *   node dist/load/generate.js --blocks N --txs-per-block M --seed S [--forks] [--no-mempool] [--no-microblocks]
 *        (--out F.tsv | --url http://127.0.0.1:3700)
 */
import { pathToFileURL } from 'node:url';
import { ArgReader } from './bench-support.js';
import { generateToFile, streamToObserver } from './generator/index.js';
import type { GeneratedMessage, GeneratorOptions } from './generator/types.js';

// ------------------------------------------------------------------------------------------------
// CLI

function parseCli(argv: string[]): { opts: GeneratorOptions; out?: string; url?: string; quiet: boolean } {
  const opts: GeneratorOptions = { blocks: 100, txsPerBlock: 10, seed: 'stacks-pulse' };
  let out: string | undefined;
  let url: string | undefined;
  let quiet = false;
  const args = new ArgReader(argv);
  for (let a = args.next(); a !== undefined; a = args.next()) {
    switch (a) {
      case '--blocks': opts.blocks = args.integer(); break;
      case '--txs-per-block': opts.txsPerBlock = args.integer(); break;
      case '--seed': opts.seed = args.value(); break;
      case '--forks': opts.forks = true; break;
      case '--bns': opts.bns = true; break;
      case '--bns-per-block': opts.bns = true; opts.bnsPerBlock = args.integer(); break;
      case '--fork-every': opts.forkEvery = args.integer(); break;
      case '--fork-depth': opts.forkDepth = args.integer(); break;
      case '--no-mempool': opts.mempool = false; break;
      case '--no-microblocks': opts.microblocks = false; break;
      case '--microblock-every': opts.microblockEvery = args.integer(); break;
      case '--accounts': opts.accounts = args.integer(); break;
      case '--maturity': opts.maturity = args.integer(); break;
      case '--out': out = args.value(); break;
      case '--url': url = args.value(); break;
      case '--quiet': quiet = true; break;
      case '-h':
      case '--help':
        process.stdout.write(
          'usage: node dist/load/generate.js --blocks N --txs-per-block M --seed S [--forks] [--fork-every N] [--fork-depth N]\n' +
            '         [--bns] [--bns-per-block N]\n' +
            '         [--no-mempool] [--no-microblocks] [--microblock-every N] [--accounts N] [--maturity N] (--out F.tsv | --url URL)\n',
        );
        process.exit(0);
      // eslint-disable-next-line no-fallthrough
      default:
        throw new Error(`unknown option ${a} (see --help)`);
    }
  }
  if (!out === !url) throw new Error('give exactly one of --out F.tsv or --url URL');
  return { opts, out, url, quiet };
}

async function cli() {
  const { opts, out, url, quiet } = parseCli(process.argv.slice(2));
  const started = Date.now();
  let last = started;
  let blocks = 0;
  const progress = (m: GeneratedMessage) => {
    if (m.path === '/new_block') blocks++;
    const now = Date.now();
    if (!quiet && now - last > 2000) {
      last = now;
      process.stderr.write(`… ${blocks} blocks, ${m.id} messages, ${((now - started) / 1000).toFixed(0)} s\n`);
    }
  };
  const summary = out ? await generateToFile(opts, out, progress) : await streamToObserver(opts, url!, progress);
  const seconds = (Date.now() - started) / 1000;
  process.stdout.write(JSON.stringify({ ...summary, seconds }, null, 2) + '\n');
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  cli().catch((err) => {
    process.stderr.write(`generate: ${(err as Error).stack ?? err}\n`);
    process.exit(1);
  });
}
