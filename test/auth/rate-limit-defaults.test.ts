// The defaults never get in the way of a person on their own machine: loopback clients (REST and Socket.IO) are not
// rate limited unless RATE_LIMIT_EXEMPT=none, and a 429 says what the client can actually do about it.
import { describe, expect, it } from 'vitest';
import { startTestService } from '../helpers/service.js';
import { recordingSocket } from '../helpers/push-clients.js';

async function statuses(base: string, path: string, n: number): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const res = await fetch(base + path);
    await res.arrayBuffer();
    out.push(res.status);
  }
  return out;
}

describe('rate limit defaults', () => {
  it('loopback is exempt by default: 60 requests and several Socket.IO connections under a limit of 2 per minute', async () => {
    // RATE_LIMIT_EXEMPT left at its default; the limit made tiny so that any counting would show
    const svc = await startTestService({ RATE_LIMIT_ANON_RPM: '2' });
    try {
      const got = await statuses(svc.api, '/extended/v2/blocks/latest', 60);
      expect(got.filter((s) => s === 429)).toEqual([]);
      const sockets = [];
      for (let i = 0; i < 4; i++) sockets.push(await recordingSocket(svc.api, { rooms: ['block'] }));
      expect(sockets.every((s) => s.socket.connected)).toBe(true);
      for (const s of sockets) s.socket.disconnect();
    } finally {
      await svc.stop();
    }
  }, 300_000);

  it('RATE_LIMIT_EXEMPT=none limits loopback too; the 429 names the wait, the API key and the setting', async () => {
    const svc = await startTestService({ RATE_LIMIT_ANON_RPM: '2', RATE_LIMIT_EXEMPT: 'none' });
    try {
      expect(await statuses(svc.api, '/extended', 2)).toEqual([200, 200]);
      const res = await fetch(svc.api + '/extended');
      expect(res.status).toBe(429);
      const retry = Number(res.headers.get('retry-after'));
      expect(retry).toBeGreaterThan(0);
      expect(res.headers.get('ratelimit-policy')).toBe('2;w=60');
      expect(res.headers.get('access-control-expose-headers')).toContain('Retry-After');
      const body = (await res.json()) as { statusCode: number; error: string; message: string };
      expect(body.statusCode).toBe(429);
      expect(body.error).toBe('Too Many Requests');
      expect(body.message).toContain('2 requests per minute');
      expect(body.message).toContain(`Wait ${retry} s (Retry-After)`);
      expect(body.message).toContain('x-api-key');
      expect(body.message).toContain('stacks-pulse keys create');
      expect(body.message).toContain('while the service is stopped');
      expect(body.message).toContain('RATE_LIMIT_ANON_RPM');
      // a Socket.IO connection from loopback is refused the same way
      const refused = await recordingSocket(svc.api).then(
        () => undefined,
        (err: Error & { data?: { status: number } }) => err,
      );
      expect(refused?.data?.status).toBe(429);
    } finally {
      await svc.stop();
    }
  }, 300_000);
});
