/**
 * The command line: commands, their options and help texts, and a parser that turns argv into one of: run a command
 * with its options, print help / version (exit 0), or a usage error (exit 2). Pure (no I/O): test/cli.test.ts
 * snapshots every help text.
 */

export interface OptionSpec {
  name: string;
  /** placeholder of the value; undefined: a flag */
  value?: string;
  required?: boolean;
  help: string;
  /** checks a value: undefined when valid, else what was expected (a usage error, exit 2) */
  check?: (value: string) => string | undefined;
}

const nonNegativeInteger = (v: string) => (/^\d+$/.test(v) ? undefined : 'a non-negative integer');
const positiveInteger = (v: string) => (/^\d+$/.test(v) && Number(v) > 0 ? undefined : 'a positive integer');
const seconds = (v: string) => (/^\d+(\.\d+)?$/.test(v) ? undefined : 'a number of seconds');
/** an http(s) URL with a host (what the observer commands POST to) */
export const httpUrl = (v: string): string | undefined => {
  try {
    const u = new URL(v);
    if ((u.protocol === 'http:' || u.protocol === 'https:') && u.hostname) return undefined;
  } catch {
    /* not a URL */
  }
  return 'an http:// or https:// URL such as http://127.0.0.1:3700';
};

export interface CommandSpec {
  /** e.g. 'serve', 'keys create' */
  name: string;
  summary: string;
  /** positional arguments, e.g. ['NAME'] */
  positionals?: { name: string; required: boolean; help: string }[];
  options: OptionSpec[];
  /** extra lines printed under the options */
  notes?: string[];
}

const DB_NOTE =
  'Opens the database: DATABASE_URL, or the embedded one in DATA_DIR (refused while another stacks-pulse process, ' +
  'e.g. the running service, holds DATA_DIR: stop it first or use DATABASE_URL).';

export const COMMANDS: CommandSpec[] = [
  {
    name: 'serve',
    summary: 'run the event observer and the REST API / push, per API_MODE (the default command)',
    options: [],
    notes: ['Configuration comes from the environment (see README: Configuration), e.g. API_PORT, OBSERVER_PORT, DATABASE_URL, DATA_DIR.'],
  },
  {
    name: 'api',
    summary: 'run the REST API and push only (API_MODE=api; needs DATABASE_URL)',
    options: [],
  },
  {
    name: 'ingest',
    summary: 'run the event observer only (API_MODE=ingest; needs DATABASE_URL)',
    options: [],
  },
  {
    name: 'migrate',
    summary: 'apply the sql/ migrations not applied yet, then exit',
    options: [],
    notes: [DB_NOTE],
  },
  {
    name: 'import-bns',
    summary: 'load the BNS genesis (Stacks 1.0) namespaces, names, zonefiles and subdomains from the node\'s genesis files',
    options: [
      {
        name: '--dir',
        value: 'D',
        required: true,
        help: 'folder with chainstate.txt, name_zonefiles.txt, subdomains.csv, subdomain_zonefiles.txt (and their .sha256)',
      },
    ],
    notes: [DB_NOTE, 'Idempotent: a second run loads nothing again.'],
  },
  {
    name: 'import-events',
    summary: 'load a recorded node stream (TSV) into the database through the ingest code',
    options: [
      { name: '--file', value: 'F.tsv', required: true, help: 'lines id<TAB>timestamp<TAB>path<TAB>json-body' },
      {
        name: '--defer-indexes',
        value: 'auto|on|off',
        help: 'drop the API-only indexes while importing, build them at the end (auto: on for an empty database and a file of 16 MiB or more)',
        check: (v) => (['auto', 'on', 'off'].includes(v) ? undefined : 'auto, on or off'),
      },
    ],
    notes: [
      DB_NOTE,
      'Lines are appended to the log in chunks while the projector applies them in large batches; it ends when all are applied.',
      'Ctrl-C stops after the chunk in flight (exit 130); what is logged stays logged, and a re-run continues without duplicates.',
    ],
  },
  {
    name: 'export-events',
    summary: 'write the raw event log to a TSV file (the format import-events and replay read)',
    options: [{ name: '--file', value: 'F.tsv', required: true, help: 'output file (overwritten)' }],
    notes: [DB_NOTE],
  },
  {
    name: 'replay',
    summary: 'POST a recorded node stream (TSV) to a running observer, as a Stacks node does',
    options: [
      { name: '--file', value: 'F.tsv', required: true, help: 'lines id<TAB>timestamp<TAB>path<TAB>json-body' },
      { name: '--url', value: 'URL', help: 'the observer (default http://127.0.0.1:3700)', check: httpUrl },
      {
        name: '--give-up-after',
        value: 'SECONDS',
        help: 'stop when one message has not been accepted for this long (default: retry forever, as a node does)',
        check: seconds,
      },
    ],
    notes: [
      'One message at a time, in order; each is retried (pause doubling from 0.25 s to 10 s) while the observer is unreachable or',
      'answers 5xx, until it is answered 200. A 4xx answer (e.g. 404: the URL is not the observer) stops it at once (exit 1).',
      'Does not open the database: works against a running service, embedded database included.',
    ],
  },
  {
    name: 'demo',
    summary: 'feed a running service a generated demo chain, live: blocks, transfers, tokens, BNS names, forks, a mempool',
    options: [
      { name: '--url', value: 'URL', help: 'the running service\'s observer (default http://127.0.0.1:3700)', check: httpUrl },
      { name: '--blocks', value: 'N', help: 'blocks to mine (default 30)', check: positiveInteger },
      { name: '--pace', value: 'MS', help: 'milliseconds between blocks (default 2000; 0: as fast as the service takes them)', check: nonNegativeInteger },
    ],
    notes: [
      'Start the service first (npm start), then run this in another terminal and open the dashboard (http://localhost:3999/dashboard).',
      'The chain is testnet and always the same: running it again changes nothing. Ctrl-C stops it (exit 130).',
      'Does not open the database: it POSTs to the observer as a Stacks node does.',
    ],
  },
  {
    name: 'keys create',
    summary: 'create an API key; prints it once (only its SHA-256 is stored)',
    options: [
      { name: '--name', value: 'NAME', required: true, help: 'a unique name for the key' },
      { name: '--rpm', value: 'N', help: 'requests per minute for this key (0: unlimited; default RATE_LIMIT_KEY_RPM)', check: nonNegativeInteger },
    ],
    notes: [DB_NOTE],
  },
  {
    name: 'keys list',
    summary: 'list API keys (name, created, last used, limit, state; never the key)',
    options: [],
    notes: [DB_NOTE],
  },
  {
    name: 'keys revoke',
    summary: 'revoke an API key (refused everywhere within about 5 s)',
    positionals: [{ name: 'NAME', required: true, help: 'the key to revoke' }],
    options: [],
    notes: [DB_NOTE],
  },
];

const COMMON_OPTIONS: OptionSpec[] = [{ name: '--help', help: 'show this help' }];

function synopsis(c: CommandSpec): string {
  const parts = [`stacks-pulse ${c.name}`];
  for (const p of c.positionals ?? []) parts.push(p.required ? p.name : `[${p.name}]`);
  for (const o of c.options) {
    const s = o.value ? `${o.name} ${o.value}` : o.name;
    parts.push(o.required ? s : `[${s}]`);
  }
  return parts.join(' ');
}

/** The command with its required arguments (optional ones as [OPTIONS]). */
function shortSynopsis(c: CommandSpec): string {
  const parts = [c.name];
  for (const p of c.positionals ?? []) parts.push(p.required ? p.name : `[${p.name}]`);
  for (const o of c.options) if (o.required) parts.push(o.value ? `${o.name} ${o.value}` : o.name);
  if (c.options.some((o) => !o.required)) parts.push('[OPTIONS]');
  return parts.join(' ');
}

export function mainUsage(version: string): string {
  const width = Math.max(...COMMANDS.map((c) => shortSynopsis(c).length));
  const lines = [
    `stacks-pulse ${version}: real-time data API for the Stacks blockchain`,
    '',
    'usage: stacks-pulse [COMMAND] [OPTIONS]',
    '',
    'commands:',
    ...COMMANDS.map((c) => `  ${shortSynopsis(c).padEnd(width)}  ${c.summary}`),
    '',
    'options:',
    '  --help, -h      show this help (stacks-pulse COMMAND --help: that command\'s help)',
    '  --version, -v   print the version',
    '',
    'Settings come from environment variables (API_PORT, OBSERVER_PORT, DATABASE_URL, DATA_DIR, ...): see README.md.',
  ];
  return lines.join('\n') + '\n';
}

export function commandUsage(c: CommandSpec): string {
  const lines = [`usage: ${synopsis(c)}`, '', c.summary];
  const rows: [string, string][] = [];
  for (const p of c.positionals ?? []) rows.push([p.name, p.help]);
  for (const o of [...c.options, ...COMMON_OPTIONS]) rows.push([o.value ? `${o.name} ${o.value}` : o.name, o.help + (o.required ? ' (required)' : '')]);
  const width = Math.max(...rows.map((r) => r[0].length));
  lines.push('', 'options:', ...rows.map(([a, b]) => `  ${a.padEnd(width)}  ${b}`));
  if (c.notes?.length) lines.push('', ...c.notes);
  return lines.join('\n') + '\n';
}

export type Parsed =
  | { kind: 'run'; command: string; options: Record<string, string>; positionals: string[] }
  | { kind: 'output'; text: string; code: 0 }
  | { kind: 'error'; text: string; code: 2 };

/** The prefix of every error line the CLI prints: `stacks-pulse <command>: error: ` (`stacks-pulse: error: ` without one). */
export function errorPrefix(command?: string): string {
  return `stacks-pulse${command ? ` ${command}` : ''}: error: `;
}

function error(message: string, usage: string, command?: string): Parsed {
  return { kind: 'error', text: `${errorPrefix(command)}${message}\n\n${usage}`, code: 2 };
}

/** argv without node and the script. */
export function parseCommandLine(argv: string[], version: string): Parsed {
  const args = [...argv];
  if (args.length === 0) return { kind: 'run', command: 'serve', options: {}, positionals: [] };
  const first = args[0];
  if (first === '--help' || first === '-h' || first === 'help') {
    if (first === 'help' && args.length > 1) return parseCommandLine([...args.slice(1), '--help'], version);
    return { kind: 'output', text: mainUsage(version), code: 0 };
  }
  if (first === '--version' || first === '-v' || first === 'version') return { kind: 'output', text: `${version}\n`, code: 0 };
  if (first.startsWith('-')) return error(`unknown option ${first}`, mainUsage(version));
  let name = args.shift()!;
  if (name === 'keys') {
    const sub = args[0];
    if (sub === undefined || sub === '--help' || sub === '-h') {
      const keys = COMMANDS.filter((c) => c.name.startsWith('keys '));
      const text = keys.map((c) => commandUsage(c)).join('\n');
      return sub === undefined ? error('expected create, list or revoke', text, 'keys') : { kind: 'output', text, code: 0 };
    }
    if (!['create', 'list', 'revoke'].includes(sub)) {
      const keys = COMMANDS.filter((c) => c.name.startsWith('keys '));
      return error(`unknown subcommand "${sub}" (expected create, list or revoke)`, keys.map((c) => commandUsage(c)).join('\n'), 'keys');
    }
    name = `keys ${args.shift()}`;
  }
  const spec = COMMANDS.find((c) => c.name === name);
  if (!spec) return error(`unknown command "${name}"`, mainUsage(version));
  const usage = commandUsage(spec);
  if (args.includes('--help') || args.includes('-h')) return { kind: 'output', text: usage, code: 0 };
  const options: Record<string, string> = {};
  const positionals: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (a.startsWith('--')) {
      const eq = a.indexOf('=');
      const key = eq >= 0 ? a.slice(0, eq) : a;
      const opt = spec.options.find((o) => o.name === key);
      if (!opt) return error(`unknown option ${key}`, usage, spec.name);
      let value: string;
      if (!opt.value) value = 'true';
      else if (eq >= 0) value = a.slice(eq + 1);
      else {
        if (i + 1 >= args.length) return error(`${key} needs a value (${opt.value})`, usage, spec.name);
        value = args[++i];
      }
      const expected = opt.check?.(value);
      if (expected !== undefined) return error(`${key}: expected ${expected}, got "${value}"`, usage, spec.name);
      options[key.slice(2)] = value;
    } else if (a.startsWith('-') && a !== '-') {
      return error(`unknown option ${a}`, usage, spec.name);
    } else {
      positionals.push(a);
    }
  }
  const maxPositionals = spec.positionals?.length ?? 0;
  if (positionals.length > maxPositionals) return error(`unexpected argument "${positionals[maxPositionals]}"`, usage, spec.name);
  for (const [i, p] of (spec.positionals ?? []).entries()) {
    if (p.required && positionals[i] === undefined) return error(`missing ${p.name}`, usage, spec.name);
  }
  for (const o of spec.options) {
    if (o.required && options[o.name.slice(2)] === undefined) return error(`missing ${o.name} ${o.value ?? ''}`.trimEnd(), usage, spec.name);
  }
  return { kind: 'run', command: spec.name, options, positionals };
}
