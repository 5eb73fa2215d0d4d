/**
 * Golden streams: each fixture with a recorded reference stream (fixtures/golden/<scenario>.socketio.json) is
 * replayed into the real service while a Socket.IO client sits in the golden `subscriptions`; the received stream
 * must equal the golden one room by room (test/helpers/push-compare.ts applies SPEC.md's differences).
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { io as connect, type Socket } from 'socket.io-client';
import { startTestService, replay, type TestService } from '../helpers/service.js';
import { FIXTURES_DIR, fixtureNames, readFixture, readGolden } from '../helpers/fixtures.js';
import { compareStreams, pushSpecDecisions, type GoldenPushMessage, type ReceivedMessage } from '../helpers/push-compare.js';

interface GoldenStream {
  subscriptions: string[];
  messages: GoldenPushMessage[];
}

const scenarios = fixtureNames().filter((n) => existsSync(path.join(FIXTURES_DIR, 'golden', `${n}.socketio.json`)));

function connected(s: Socket): Promise<void> {
  return new Promise((resolve, reject) => {
    s.once('connect', () => resolve());
    s.once('connect_error', reject);
  });
}

describe('Socket.IO streams equal the reference golden streams', () => {
  const services: TestService[] = [];
  afterAll(async () => {
    await Promise.all(services.map((s) => s.stop()));
  });

  it('has golden streams to compare', () => {
    expect(scenarios.length).toBeGreaterThan(3);
  });

  for (const name of scenarios) {
    it(name, async () => {
      const golden = readGolden<GoldenStream>(`${name}.socketio.json`);
      const lines = readFixture(name);
      const svc = await startTestService();
      services.push(svc);
      const socket = connect(svc.api, {
        path: '/socket.io/',
        transports: ['websocket'],
        query: { subscriptions: golden.subscriptions.join(',') },
        reconnection: false,
      });
      const received: ReceivedMessage[] = [];
      let line = -1;
      socket.onAny((event: string, ...args: unknown[]) => received.push({ event, args, line }));
      await connected(socket);
      // One line at a time; the subscribe ack comes back behind every packet the line produced (one connection,
      // in order; the publisher.idle() resolves once the line is published), so each message is tagged with its line.
      for (line = 0; line < lines.length; line++) {
        const [status] = await replay(svc.observer, [lines[line]]);
        expect(status).toBe(200);
        await svc.service.push!.publisher!.idle();
        expect(await socket.timeout(5000).emitWithAck('subscribe', 'block')).toBeNull();
      }
      socket.disconnect();
      const want = pushSpecDecisions(golden.messages, lines);
      const problems = compareStreams(received, want);
      if (process.env.PUSH_DUMP_DIR) (await import("node:fs")).writeFileSync(`${process.env.PUSH_DUMP_DIR}/${name}.json`, JSON.stringify({ received, want }, null, 1));
      expect(problems).toEqual([]);
      // every message carries a cursor, increasing
      const cursors = received.map((m) => (m.args.at(-1) as { cursor?: string }).cursor);
      expect(cursors.every((c) => typeof c === 'string' && /^\d+$/.test(c))).toBe(true);
      for (let i = 1; i < cursors.length; i++) expect(BigInt(cursors[i]!)).toBeGreaterThan(BigInt(cursors[i - 1]!));
    }, Number(process.env.PUSH_GOLDEN_TIMEOUT_MS ?? 120_000));
  }
});
