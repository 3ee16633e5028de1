/**
 * A PostgreSQL database of the tests' own: created under a random name, dropped at the end.
 * The server is TEST_DATABASE_URL (a URL of a database to connect to for CREATE DATABASE),
 * by default the local one of `make setup` (127.0.0.1:5432, trust auth, user postgres). No
 * server is a failure naming what to do, never a skip: CI has one.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';

export const ADMIN_URL = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

/** The URL of another database on the same server. */
export function databaseUrl(name: string, schema?: string): string {
  const u = new URL(ADMIN_URL);
  u.pathname = `/${name}`;
  if (schema !== undefined) u.searchParams.set('options', `-c search_path=${schema}`);
  return u.toString();
}

async function admin<T>(fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: ADMIN_URL, connectionTimeoutMillis: 5000 });
  try {
    await client.connect();
  } catch (err) {
    throw new Error(`PostgreSQL tests: no server answers at ${ADMIN_URL} (${(err as Error).message || String(err)}); `
      + 'start it with `make postgresql`, or point TEST_DATABASE_URL at one');
  }
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

export interface TestDatabase {
  name: string;
  url: string;
  /** a fresh schema in this database, its URL putting it first on the search path */
  schemaUrl(): Promise<string>;
  drop(): Promise<void>;
}

export async function createTestDatabase(prefix = 'troupe_test'): Promise<TestDatabase> {
  const name = `${prefix}_${randomBytes(6).toString('hex')}`;
  await admin((c) => c.query(`CREATE DATABASE ${name}`));
  let n = 0;
  return {
    name,
    url: databaseUrl(name),
    async schemaUrl() {
      const schema = `s${n++}`;
      const client = new pg.Client({ connectionString: databaseUrl(name) });
      await client.connect();
      try {
        await client.query(`CREATE SCHEMA ${schema}`);
      } finally {
        await client.end();
      }
      return databaseUrl(name, schema);
    },
    drop: () => admin(async (c) => void (await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`))),
  };
}
