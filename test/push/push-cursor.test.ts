// A Socket.IO resume cursor given as a JSON number (auth: { cursor: 1 }) is accepted like its decimal string.
import { describe, expect, it } from 'vitest';
import { io as connect } from 'socket.io-client';
import { readFixture } from '../helpers/fixtures.js';
import { replay, startTestService } from '../helpers/service.js';
import { recordingSocket } from '../helpers/push-clients.js';

describe('Socket.IO resume cursor', () => {
  it('a numeric cursor resumes exactly like the same cursor as a string; other values are refused', async () => {
    const svc = await startTestService({ PUSH_ROOMS: 'all' });
    try {
      await replay(svc.observer, readFixture('mocknet').slice(0, 12));
      // applied is not yet published: both clients connect once every message is stored and delivered, so none
      // arrives live to one of them between the two snapshots compared below
      const deadline = Date.now() + 120_000;
      for (;;) {
        const [{ pending, last }] = await svc.db.sql<{ pending: number; last: string }[]>`
          SELECT (SELECT count(*)::int FROM push_outbox) AS pending, (SELECT COALESCE(max(seq), 0)::text FROM push_messages) AS last`;
        const status = (await (await fetch(`${svc.api}/extended/v1/status/push`)).json()) as { last_cursor: string };
        if (pending === 0 && status.last_cursor === last) break;
        if (Date.now() > deadline) throw new Error(`push not caught up: outbox ${pending}, stored ${last}, delivered ${status.last_cursor}`);
        await new Promise((r) => setTimeout(r, 20));
      }
      const asString = await recordingSocket(svc.api, { rooms: ['block'], auth: { cursor: '1' } });
      const asNumber = await recordingSocket(svc.api, { rooms: ['block'], auth: { cursor: 1 } });
      await Promise.all([asString.sync(), asNumber.sync()]);
      expect(asString.got.length).toBeGreaterThan(0);
      expect(asNumber.got).toEqual(asString.got);
      asString.socket.disconnect();
      asNumber.socket.disconnect();
      for (const cursor of [-1, 1.5, '1x', true]) {
        const s = connect(svc.api, { transports: ['websocket'], reconnection: false, forceNew: true, auth: { cursor } });
        const err = await new Promise<Error>((resolve, reject) => {
          s.once('connect_error', resolve);
          s.once('connect', () => reject(new Error(`cursor ${JSON.stringify(cursor)} accepted`)));
        });
        expect(err.message).toMatch(/^Invalid cursor/);
        s.disconnect();
      }
    } finally {
      await svc.stop();
    }
  }, 300_000);
});
