/**
 * `stacks-pulse keys ...`:
 *   keys create --name NAME [--rpm N]   prints the new key once (stdout); only its SHA-256 is stored
 *   keys list                           name, created, last used, limit, state (never the key)
 *   keys revoke NAME                    the key is refused (401) from then on
 */
import type { Sql } from '../store/sql.js';
import { KeyError, createKey } from './keys.js';
import { listKeys, revokeKey } from '../store/api-keys.js';

export const KEYS_USAGE =
  'usage: stacks-pulse keys create --name NAME [--rpm N] | keys list | keys revoke NAME\n';

export interface CliIo {
  out: (s: string) => void;
  err: (s: string) => void;
  /** Put before a runtime error line (the CLI's `stacks-pulse keys <sub>: error: `); usage text goes out bare. */
  errorPrefix?: (sub: string) => string;
}

function option(args: string[], name: string): string | undefined {
  const i = args.indexOf(name);
  if (i >= 0) return args[i + 1];
  return args.find((a) => a.startsWith(name + '='))?.slice(name.length + 1);
}

const iso = (d: Date | null): string => (d ? d.toISOString().replace(/\.\d{3}Z$/, 'Z') : '-');

/** Runs a keys subcommand; returns the process exit code. `defaultRpm` is RATE_LIMIT_KEY_RPM (for `list`). */
export async function runKeysCommand(sql: Sql, args: string[], defaultRpm: number, io: CliIo): Promise<number> {
  const [sub, ...rest] = args;
  const fail = (message: string): number => {
    io.err(`${io.errorPrefix?.(sub) ?? ''}${message}\n`);
    return 1;
  };
  try {
    switch (sub) {
      case 'create': {
        const name = option(rest, '--name');
        if (!name) {
          io.err(KEYS_USAGE);
          return 2;
        }
        const rpmRaw = option(rest, '--rpm');
        let rpm: number | undefined;
        if (rpmRaw !== undefined) {
          if (!/^\d+$/.test(rpmRaw)) throw new KeyError(`--rpm: expected a non-negative integer, got "${rpmRaw}"`);
          rpm = Number(rpmRaw);
        }
        const { key } = await createKey(sql, name, rpm);
        io.out(key + '\n');
        io.err(`created API key "${name}" (${rpm === undefined ? `default limit, ${defaultRpm}` : rpm === 0 ? 'unlimited' : rpm} requests/minute). ` +
          'Store it now: it is not shown again. Clients send it in the x-api-key header.\n');
        return 0;
      }
      case 'list': {
        const rows = await listKeys(sql);
        const table = [['NAME', 'CREATED', 'LAST USED', 'RPM', 'STATE']];
        for (const r of rows) {
          const rpm = r.rpm === null ? `${defaultRpm === 0 ? 'unlimited' : defaultRpm} (default)` : r.rpm === 0 ? 'unlimited' : String(r.rpm);
          table.push([r.name, iso(r.created_at), iso(r.last_used_at), rpm, r.revoked_at ? `revoked ${iso(r.revoked_at)}` : 'active']);
        }
        const widths = table[0].map((_, c) => Math.max(...table.map((row) => row[c].length)));
        for (const row of table) io.out(row.map((cell, c) => cell.padEnd(widths[c])).join('  ').trimEnd() + '\n');
        return 0;
      }
      case 'revoke': {
        const name = rest.find((a) => !a.startsWith('--')) ?? option(rest, '--name');
        if (!name) {
          io.err(KEYS_USAGE);
          return 2;
        }
        if (!(await revokeKey(sql, name))) {
          return fail(`no active key named "${name}"`);
        }
        io.err(`revoked API key "${name}"\n`);
        return 0;
      }
      default:
        io.err(KEYS_USAGE);
        return 2;
    }
  } catch (err) {
    if (err instanceof KeyError) {
      return fail(err.message);
    }
    throw err;
  }
}
