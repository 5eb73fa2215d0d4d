import type { Logger } from 'pino';
import type { Sql } from '../store/connect.js';

/** What every REST route module gets. */
export interface ApiContext {
  /** read connection (DATABASE_READ_URL or the main one) */
  sql: Sql;
  log: Logger;
  serverVersion: string;
}
