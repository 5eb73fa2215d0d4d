import { describe, expect, it } from 'vitest';
import { formatLsn, parseLsn, replayableLsn, segmentSize } from '../../src/store/replica.js';

const SEG = 16n * 1024n * 1024n;

describe('WAL positions', () => {
  it('parses and prints LSNs', () => {
    expect(parseLsn('0/0')).toBe(0n);
    expect(parseLsn('16/B374D848')).toBe((0x16n << 32n) + 0xb374d848n);
    expect(formatLsn(parseLsn('16/B374D848'))).toBe('16/B374D848');
    expect(() => parseLsn('16-B374D848')).toThrow(/not an LSN/);
  });

  it('moves an insert position just past a page header back to the page boundary', () => {
    expect(replayableLsn(8192n * 5n + 24n, SEG)).toBe(8192n * 5n); // short header
    expect(replayableLsn(SEG * 3n + 40n, SEG)).toBe(SEG * 3n); // a segment's first page: long header
    expect(replayableLsn(8192n * 5n + 40n, SEG)).toBe(8192n * 5n + 40n); // a record end on an ordinary page
    expect(replayableLsn(8192n * 5n + 1000n, SEG)).toBe(8192n * 5n + 1000n);
  });

  it('reads wal_segment_size as SHOW prints it', () => {
    expect(segmentSize('16MB')).toBe(SEG);
    expect(segmentSize('1GB')).toBe(1024n * 1024n * 1024n);
    expect(segmentSize('16777216')).toBe(SEG);
  });
});
