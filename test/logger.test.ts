import { describe, expect, it } from 'vitest';
import { Writable } from 'node:stream';
import { createLogger, logger } from '../src/logger.js';

function capture() {
  const lines: Record<string, any>[] = [];
  const stream = new Writable({
    write(chunk, _enc, cb) {
      for (const l of String(chunk).split('\n')) if (l.trim()) lines.push(JSON.parse(l));
      cb();
    },
  });
  return { lines, stream };
}

describe('logger', () => {
  it('writes JSON at the chosen level and above', () => {
    const { lines, stream } = capture();
    const log = createLogger('warn', stream);
    log.info('hidden');
    log.warn({ height: 7 }, 'shown');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ level: 40, msg: 'shown', height: 7 });
  });

  it('never logs API keys', () => {
    const { lines, stream } = capture();
    const log = createLogger('info', stream);
    log.info({ req: { headers: { 'x-api-key': 'secret-1', host: 'h' } } }, 'a');
    log.info({ headers: { 'x-api-key': 'secret-2' } }, 'b');
    log.info({ apiKey: 'secret-3', key: { apiKey: 'secret-4' } }, 'c');
    const text = JSON.stringify(lines);
    for (const s of ['secret-1', 'secret-2', 'secret-3', 'secret-4']) expect(text).not.toContain(s);
    expect(lines[0].req.headers).toEqual({ 'x-api-key': '[redacted]', host: 'h' });
    expect(lines[2].apiKey).toBe('[redacted]');
  });

  it('has a default logger at info', () => {
    expect(logger.level).toBe('info');
  });
});
