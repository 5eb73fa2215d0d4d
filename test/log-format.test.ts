// Text log lines for a terminal (pure): no pid or epoch time, errors without their stack unless asked, nothing the
// banner says.
import { describe, expect, it } from 'vitest';
import { textDestination, textLine, textLogs } from '../src/log-format.js';
import { createLogger } from '../src/logger.js';

describe('text log lines', () => {
  it('formats fields, levels and errors; the stack only when asked', () => {
    const t = new Date(2026, 0, 2, 3, 4, 5).getTime();
    const err = { type: 'Error', message: 'boom', stack: 'Error: boom\n    at f (x.js:1:1)' };
    expect(textLine(JSON.stringify({ level: 30, time: t, pid: 1, msg: 'logged /new_block', height: 5, hash: '0xab' }), false)).toBe(
      '03:04:05 logged /new_block height=5 hash=0xab\n',
    );
    expect(textLine(JSON.stringify({ level: 40, time: t, pid: 1, msg: 'Redis unreachable', err }), false)).toBe('03:04:05 WARN Redis unreachable: boom\n');
    expect(textLine(JSON.stringify({ level: 50, time: t, msg: 'failed', err }), true)).toBe('03:04:05 ERROR failed: boom\n    at f (x.js:1:1)\n');
    expect(textLine(JSON.stringify({ level: 30, time: t, msg: 'API listening', port: 1 }), false)).toBe('');
    expect(textLine(JSON.stringify({ level: 30, time: t, msg: 'x', note: 'two words' }), false)).toBe('03:04:05 x note="two words"\n');
  });

  it('LOG_FORMAT: auto follows the terminal', () => {
    expect(textLogs('auto', true)).toBe(true);
    expect(textLogs('auto', false)).toBe(false);
    expect(textLogs('json', true)).toBe(false);
    expect(textLogs('text', false)).toBe(true);
  });

  it('a pino logger writes through it', () => {
    let out = '';
    const log = createLogger('info', textDestination(() => false, { write: (s: string) => (out += s) }));
    log.info({ migrations: 51 }, 'migrations applied');
    log.debug('hidden');
    expect(out).toMatch(/^\d\d:\d\d:\d\d migrations applied migrations=51\n$/);
  });
});
