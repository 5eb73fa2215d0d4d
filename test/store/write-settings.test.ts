/**
 * The server settings a long import checks (src/store/maintenance.ts writeSettings) and the advice it logs
 * (src/replay.ts syncSettingsAdvice): read from the server in bytes and seconds, and only for a large file.
 */
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeSettings, type WriteSettings } from '../../src/store/maintenance.js';
import { SETTINGS_ADVICE_MIN_BYTES, syncSettingsAdvice } from '../../src/replay.js';
import { TEST_DATABASE_URL } from '../helpers/db.js';
import type { Sql } from '../../src/store/sql.js';

const GB = 1024 ** 3;

describe('write settings', () => {
  let sql: postgres.Sql;
  beforeAll(() => {
    sql = postgres(TEST_DATABASE_URL, { max: 1, onnotice: () => {} });
  });
  afterAll(async () => {
    await sql?.end();
  });

  it('reads shared_buffers and max_wal_size in bytes, checkpoint_timeout in seconds, as the server runs', async () => {
    const s = await writeSettings(sql as unknown as Sql);
    // the server's own conversion of each setting's text, whatever its unit
    const [want] = await sql<{ sb: string; wal: string; ckpt: string }[]>`
      SELECT pg_size_bytes(current_setting('shared_buffers'))::text AS sb,
             pg_size_bytes(current_setting('max_wal_size'))::text AS wal,
             extract(epoch FROM current_setting('checkpoint_timeout')::interval)::text AS ckpt`;
    expect(s.sharedBuffers).toBe(Number(want.sb));
    expect(s.maxWalSize).toBe(Number(want.wal));
    expect(s.checkpointTimeout).toBe(Number(want.ckpt));
    expect(s.sharedBuffers).toBeGreaterThan(0);
  });

  it('names each setting below what a long sync needs, with its value, and nothing for a small file', () => {
    const small: WriteSettings = { sharedBuffers: 128 * 1024 ** 2, maxWalSize: 1 * GB, checkpointTimeout: 300 };
    expect(syncSettingsAdvice(small, SETTINGS_ADVICE_MIN_BYTES - 1)).toEqual([]);
    const advice = syncSettingsAdvice(small, SETTINGS_ADVICE_MIN_BYTES);
    expect(advice).toEqual([
      'shared_buffers = 128MB (suggest: 25% of RAM, at least 1GB)',
      'max_wal_size = 1024MB (suggest: 16GB or more)',
      'checkpoint_timeout = 300s (suggest: 30min or more)',
    ]);
    const tuned: WriteSettings = { sharedBuffers: 4 * GB, maxWalSize: 32 * GB, checkpointTimeout: 3600 };
    expect(syncSettingsAdvice(tuned, 10 * GB)).toEqual([]);
    // one at a time
    expect(syncSettingsAdvice({ ...tuned, maxWalSize: 2 * GB }, 10 * GB)).toEqual(['max_wal_size = 2048MB (suggest: 16GB or more)']);
    // a setting the server did not report is not advised on
    expect(syncSettingsAdvice({ ...small, sharedBuffers: NaN, maxWalSize: NaN }, 10 * GB)).toEqual(['checkpoint_timeout = 300s (suggest: 30min or more)']);
  });
});
