/**
 * PUSH_ROOMS=subscribed (the default): messages are built and stored only for rooms someone follows, or followed
 * within the resume window (src/push/interest.ts); PUSH_ROOMS=all builds every room.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, replay, type TestService } from '../helpers/service.js';
import { readFixture, type FixtureLine } from '../helpers/fixtures.js';
import { recordingSocket } from '../helpers/push-clients.js';
import { createTestDatabase } from '../helpers/db.js';
import { connectDatabase } from '../../src/store/connect.js';
import { InterestRecorder, InterestView } from '../../src/push/interest.js';
import { createLogger } from '../../src/logger.js';

const FIXTURE = 'fuzzed-transactions-1';
const log = createLogger('silent');

async function settle(t: TestService): Promise<void> {
  await t.service.pipeline!.idle();
  await t.service.push!.publisher!.idle();
}

async function roomCounts(t: TestService): Promise<Map<string, number>> {
  const rows = await t.db.sql<{ room: string; n: number }[]>`SELECT room, count(*)::int AS n FROM push_messages GROUP BY room`;
  return new Map(rows.map((r) => [r.room, r.n]));
}

async function until(pred: () => boolean | Promise<boolean>, ms = 120_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await pred())) {
    if (Date.now() > end) throw new Error('condition not reached in time');
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('push interest', () => {
  let lines: FixtureLine[];
  /** every room's message count when every room is built (PUSH_ROOMS=all) */
  let full: Map<string, number>;
  let addressRoom: string;

  beforeAll(async () => {
    lines = readFixture(FIXTURE);
    const t = await startTestService({ PUSH_ROOMS: 'all' });
    try {
      expect((await replay(t.observer, lines)).every((s) => s === 200)).toBe(true);
      await settle(t);
      full = await roomCounts(t);
    } finally {
      await t.stop();
    }
    const addressRooms = [...full].filter(([r, n]) => r.startsWith('address-transaction:') && n > 1).map(([r]) => r);
    expect(addressRooms.length).toBeGreaterThan(0);
    addressRoom = addressRooms[0];
  });

  it('PUSH_ROOMS=all stores messages for every kind of room', () => {
    const kinds = new Set([...full.keys()].map((r) => r.split(':')[0]));
    for (const k of ['block', 'mempool', 'transaction', 'address-transaction', 'address-stx-balance']) expect(kinds).toContain(k);
  });

  it('with nobody subscribed nothing is built, stored or owed, and the chain is still served', async () => {
    const t = await startTestService();
    try {
      expect((await replay(t.observer, lines)).every((s) => s === 200)).toBe(true);
      await settle(t);
      expect((await roomCounts(t)).size).toBe(0);
      const [{ n }] = await t.db.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM push_outbox`;
      expect(n).toBe(0);
      expect(t.service.push!.publisher!.skipped).toBeGreaterThan(0);
      const tip = (await (await fetch(t.api + '/extended')).json()) as { chain_tip?: { block_height: number } };
      expect(tip.chain_tip?.block_height).toBeGreaterThan(0);
    } finally {
      await t.stop();
    }
  });

  it('only followed rooms get messages, the same ones as when every room is built', async () => {
    const t = await startTestService();
    try {
      const c = await recordingSocket(t.api, { rooms: ['block', addressRoom] });
      expect((await replay(t.observer, lines)).every((s) => s === 200)).toBe(true);
      await settle(t);
      await c.sync();
      const counts = await roomCounts(t);
      expect([...counts.keys()].sort()).toEqual(['block', addressRoom].filter((r) => full.has(r)).sort());
      expect(counts.get(addressRoom)).toBe(full.get(addressRoom));
      expect(counts.get('block')).toBe(full.get('block'));
      expect(c.got.filter((m) => m.event === addressRoom).length).toBe(full.get(addressRoom));
      c.socket.disconnect();
    } finally {
      await t.stop();
    }
  });

  for (const [window, kept] of [
    ['600', true],
    ['0', false],
  ] as const) {
    it(`a room whose last subscriber left ${kept ? 'keeps getting messages within' : 'gets none past'} the resume window (${window} s)`, async () => {
      const t = await startTestService({ PUSH_RESUME_WINDOW_S: window });
      try {
        const c = await recordingSocket(t.api, { rooms: [addressRoom] });
        c.socket.disconnect();
        const adapter = t.service.push!.server!.io.of('/').adapter;
        await until(() => !adapter.rooms.has(addressRoom));
        expect((await replay(t.observer, lines)).every((s) => s === 200)).toBe(true);
        await settle(t);
        expect((await roomCounts(t)).get(addressRoom)).toBe(kept ? full.get(addressRoom) : undefined);
      } finally {
        await t.stop();
      }
    });
  }

  describe('across processes (push_interest + NOTIFY)', () => {
    let db: Awaited<ReturnType<typeof createTestDatabase>>;
    beforeAll(async () => {
      db = await createTestDatabase();
    });
    afterAll(async () => {
      await db?.drop();
    });

    it('a view that has not loaded yet wants every room; once loaded, only recorded ones', async () => {
      const view = new InterestView(db.sql, log, { listen: true });
      expect(view.wants('block')).toBe(true);
      expect(view.wantsAny()).toBe(true);
      await view.start();
      try {
        expect(view.wants('block')).toBe(false);
        expect(view.wantsAny()).toBe(false);
        // another process's recorder, on its own connection
        const other = await connectDatabase({ databaseUrl: db.url, dataDir: '/nonexistent', max: 1 });
        const rec = new InterestRecorder(other.sql, log, { windowMs: 60_000 });
        try {
          await rec.add('address-transaction:SP000000000000000000002Q6VF78');
          await until(() => view.wants('address-transaction:SP000000000000000000002Q6VF78'));
          expect(view.wantsKind('address-transaction')).toBe(true);
          expect(view.wantsKind('transaction')).toBe(false);
          expect(view.wants('block')).toBe(false);
          // a later view (a restarted publisher) finds it in the table
          const later = new InterestView(db.sql, log);
          await later.start();
          expect(later.wants('address-transaction:SP000000000000000000002Q6VF78')).toBe(true);
          await later.close();
        } finally {
          await rec.close();
          await other.close();
        }
      } finally {
        await view.close();
      }
    });
  });
});
