/**
 * Log lines for a person: `LOG_FORMAT=auto` (the default) writes pino's JSON lines when stdout is not a terminal (a
 * supervisor, a file, a pipe) and short text lines on a terminal; `json` and `text` force one or the other.
 *
 *   18:58:31 logged /new_block height=5 txs=8 events=8 ms=31
 *   18:58:40 WARN Redis unreachable: retrying in the background: connect ECONNREFUSED 127.0.0.1:6379
 *
 * Text lines carry no pid or epoch time, an error's message without its stack (LOG_LEVEL=debug adds the stack), and
 * leave out what the start-up banner already says (the listening lines).
 */
import type { DestinationStream } from 'pino';

export type LogFormat = 'auto' | 'json' | 'text';

/** Whether `format` means text lines on this process's stdout. */
export function textLogs(format: LogFormat, stdoutIsTTY = Boolean(process.stdout.isTTY)): boolean {
  return format === 'text' || (format === 'auto' && stdoutIsTTY);
}

const LEVELS: Record<number, string> = { 10: 'TRACE ', 20: 'DEBUG ', 30: '', 40: 'WARN ', 50: 'ERROR ', 60: 'FATAL ' };

/** messages the banner of `serve` replaces in text form */
const SAID_BY_BANNER = new Set(['API listening', 'event observer listening', 'stacks-pulse ready']);

const OMITTED = new Set(['level', 'time', 'pid', 'hostname', 'msg', 'err', 'id']);

function formatValue(v: unknown): string {
  if (typeof v === 'string') return /[\s"=]/.test(v) || v === '' ? JSON.stringify(v) : v;
  if (v !== null && typeof v === 'object') {
    const s = JSON.stringify(v);
    return s.length > 120 ? s.slice(0, 117) + '...' : s;
  }
  return String(v);
}

/** One pino JSON line as a text line (with its newline), or '' for a line the banner already said. */
export function textLine(json: string, withStack: boolean): string {
  let o: Record<string, unknown>;
  try {
    o = JSON.parse(json) as Record<string, unknown>;
  } catch {
    return json.endsWith('\n') ? json : json + '\n';
  }
  const msg = String(o.msg ?? '');
  if (SAID_BY_BANNER.has(msg)) return '';
  const t = new Date(typeof o.time === 'number' ? o.time : Date.now());
  const time = [t.getHours(), t.getMinutes(), t.getSeconds()].map((n) => String(n).padStart(2, '0')).join(':');
  const fields = Object.entries(o)
    .filter(([k, v]) => !OMITTED.has(k) && v !== undefined)
    .map(([k, v]) => `${k}=${formatValue(v)}`);
  const err = o.err as { message?: string; stack?: string } | undefined;
  let line = `${time} ${LEVELS[Number(o.level)] ?? ''}${msg}${fields.length ? ' ' + fields.join(' ') : ''}`;
  if (err?.message) line += `: ${err.message}`;
  if (withStack && err?.stack) line += '\n' + err.stack.split('\n').slice(1).join('\n');
  return line + '\n';
}

/** A pino destination writing text lines to `out` (default: stdout); stacks only when `withStack()` says so. */
export function textDestination(withStack: () => boolean, out: { write(s: string): unknown } = process.stdout): DestinationStream {
  return {
    write(chunk: string) {
      for (const json of chunk.split('\n')) {
        if (!json) continue;
        const line = textLine(json, withStack());
        if (line) out.write(line);
      }
    },
  };
}
