/** The database handle every store function takes: a postgres.js client (or a transaction of one). */
import type postgres from 'postgres';

export type Sql = postgres.Sql<Record<string, never>>;
