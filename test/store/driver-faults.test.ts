/**
 * Which errors count as postgres.js losing a connection (src/store/faults.ts), and which do not. The fault itself, for
 * real, with the recovery: test/store/connection-kills.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { isDriverConnectionLoss, isDriverSocketFault } from '../../src/store/faults.js';
import { isUnavailable } from '../../src/store/faults.js';
import { connectDatabase } from '../../src/store/connect.js';
import { TEST_DATABASE_URL } from '../helpers/db.js';

function typeErrorAt(frame: string): TypeError {
  const e = new TypeError("Cannot read properties of null (reading 'write')");
  e.stack = `TypeError: ${e.message}\n    at ${frame}\n    at process.processImmediate (node:internal/timers:483:21)`;
  return e;
}

describe('driver fault classification', () => {
  it('the driver writing to a closed socket is recognised, ESM and CommonJS builds', () => {
    expect(isDriverSocketFault(typeErrorAt('Immediate.nextWrite (file:///app/node_modules/postgres/src/connection.js:255:22)'))).toBe(true);
    expect(isDriverSocketFault(typeErrorAt('nextWrite (/app/node_modules/postgres/cjs/src/connection.js:255:22)'))).toBe(true);
    expect(isUnavailable(typeErrorAt('Immediate.nextWrite (file:///app/node_modules/postgres/src/connection.js:255:22)'))).toBe(true);
  });

  it('the same TypeError anywhere else is a bug, not a lost connection', () => {
    expect(isDriverSocketFault(typeErrorAt('writeReply (file:///app/src/http/router.ts:12:3)'))).toBe(false);
    expect(isDriverSocketFault(typeErrorAt('Socket.data (file:///app/node_modules/postgres/src/connection.js:300:1)'))).toBe(false);
    const other = typeErrorAt('Immediate.nextWrite (file:///app/node_modules/postgres/src/connection.js:255:22)');
    other.message = "Cannot read properties of undefined (reading 'x')";
    expect(isDriverSocketFault(other)).toBe(false);
    expect(isDriverSocketFault(new Error("Cannot read properties of null (reading 'write')"))).toBe(false);
    expect(isUnavailable(new TypeError('x is not a function'))).toBe(false);
  });

  it('connection losses are told apart from query errors', async () => {
    const db = await connectDatabase({ databaseUrl: TEST_DATABASE_URL, dataDir: '/nonexistent', max: 1 });
    try {
      const syntax = await db.sql.unsafe('SELEC 1').catch((e: unknown) => e);
      expect(isDriverConnectionLoss(syntax)).toBe(false);
      const closed = Object.assign(new Error('write CONNECTION_CLOSED 127.0.0.1:5432'), { code: 'CONNECTION_CLOSED' });
      closed.stack = `Error: ${closed.message}\n    at closed (file:///app/node_modules/postgres/src/connection.js:447:3)`;
      expect(isDriverConnectionLoss(closed)).toBe(true);
      const ours = Object.assign(new Error('CONNECTION_CLOSED'), { code: 'CONNECTION_CLOSED' });
      ours.stack = `Error: x\n    at mine (file:///app/src/store/x.ts:1:1)`;
      expect(isDriverConnectionLoss(ours)).toBe(false);
    } finally {
      await db.close();
    }
  });
});
