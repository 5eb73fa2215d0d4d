/**
 * Fan-out through Redis: one `ingest` process and two `api` processes (child processes, one Redis, a key
 * prefix of their own so concurrent tests never hear each other); a Socket.IO client and a JSON-RPC client on each
 * api process receive every block of a fixture replay exactly once, with the same cursors. Both adapters.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildService, spawnService, type Build, type ChildService } from '../helpers/build.js';
import { createTestDatabase } from '../helpers/db.js';
import { replay } from '../helpers/service.js';
import { readFixture, readGolden } from '../helpers/fixtures.js';
import { recordingSocket, rpcClient } from '../helpers/push-clients.js';

const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const FIXTURE = 'epoch-3-transition';
const goldenRooms = readGolden<{ subscriptions: string[] }>(`${FIXTURE}.socketio.json`).subscriptions;

let build: Build;
beforeAll(async () => {
  build = await buildService();
}, 300_000);
afterAll(() => build?.remove());

describe('fan-out through Redis: ingest + two api processes', () => {
  for (const adapter of ['classic', 'sharded'] as const) {
    it(`every client gets every block exactly once (${adapter} adapter)`, async () => {
      const db = await createTestDatabase();
      const procs: ChildService[] = [];
      const env = {
        DATABASE_URL: db.url,
        REDIS_URL,
        REDIS_KEY_PREFIX: `sp-test-${process.pid}-${randomBytes(4).toString('hex')}`,
        PUSH_REDIS_ADAPTER: adapter,
        RATE_LIMIT_ANON_RPM: '0',
      };
      try {
        const [ingest, api1, api2] = await Promise.all([
          spawnService(build.main, 'ingest', env),
          spawnService(build.main, 'api', env),
          spawnService(build.main, 'api', env),
        ]);
        procs.push(ingest, api1, api2);
        const sockets = await Promise.all([api1, api2].map((p) => recordingSocket(p.api, { rooms: ['block'] })));
        const rpcs = await Promise.all([api1, api2].map((p) => rpcClient(p.api.replace('http', 'ws') + '/extended/v1/ws')));
        for (const r of rpcs) expect((await r.call('subscribe', { event: 'block' })).result).toEqual({});

        // resume across processes: killed on api2 mid-replay, reconnected to api1 with its cursor
        const ref = await recordingSocket(api1.api, { rooms: goldenRooms });
        const r1 = await recordingSocket(api2.api, { rooms: goldenRooms });
        let r2: Awaited<ReturnType<typeof recordingSocket>> | undefined;
        const resumed = (async () => {
          while (r1.got.length < 60) await new Promise((r) => setTimeout(r, 5));
          r1.socket.io.engine.close();
          const away = ref.got.length;
          while (ref.got.length < away + 40) await new Promise((r) => setTimeout(r, 5));
          r2 = await recordingSocket(api1.api, { rooms: goldenRooms, auth: { cursor: r1.got.at(-1)!.cursor } });
        })();
        const statuses = await replay(ingest.observer!, readFixture(FIXTURE));
        expect(statuses.every((s) => s === 200)).toBe(true);
        await resumed;
        const [{ n }] = await db.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM blocks WHERE block_height > 1`;
        expect(n).toBeGreaterThan(10);
        const blocksOf = () => [
          ...sockets.map((s) => s.got.filter((m) => m.event === 'block').map((m) => m.cursor)),
          ...rpcs.map((r) => r.notifications().filter((m) => m.method === 'block').map((m) => m.cursor)),
        ];
        const deadline = Date.now() + 120_000;
        while (blocksOf().some((b) => b.length < n) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
        // a little longer: a duplicate would arrive now
        await new Promise((r) => setTimeout(r, 500));
        await Promise.all([...sockets.map((s) => s.sync()), ...rpcs.map((r) => r.sync())]);
        const all = blocksOf();
        const [{ seqs }] = await db.sql<{ seqs: string[] }[]>`
          SELECT array_agg(seq::text ORDER BY seq) AS seqs FROM push_messages WHERE room = 'block' AND event = 'block'`;
        expect(seqs).toHaveLength(n);
        for (const got of all) expect(got).toEqual(seqs);
        await Promise.all([ref.sync(), r2!.sync()]);
        const strip = (r: { event: string; args: unknown[] }[]) => r.map((m) => ({ event: m.event, args: m.args }));
        expect(ref.got.length).toBeGreaterThan(150);
        expect(strip([...r1.got, ...r2!.got])).toEqual(strip(ref.got));
        ref.socket.disconnect();
        r2!.socket.disconnect();
        // same payloads on both processes
        expect(sockets[0].got.filter((m) => m.event === 'block')).toEqual(sockets[1].got.filter((m) => m.event === 'block'));
        const status = (await (await fetch(`${api1.api}/extended/v1/status/push`)).json()) as Record<string, unknown>;
        expect(status).toMatchObject({ socket_connections: 1, resumes: 1, rpc_connections: 1, redis_adapter: adapter });
        for (const s of sockets) s.socket.disconnect();
        for (const r of rpcs) r.ws.close();
      } finally {
        await Promise.all(procs.map((p) => p.stop()));
        await db.drop();
      }
    }, 300_000);
  }
});
